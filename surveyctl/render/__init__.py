"""Renderers of a Plan and of an apply's report: text for people and logs, markdown for pull
requests, json for programs.

Each is a pure function returning a string; each format registers itself in
`surveyctl.render.formats` when its module is imported, which the registry does the first time
it is asked for a format, and the CLI prints what the chosen one returns.
"""

"""Renderers of a Plan: text for people and logs, markdown for pull requests, json for programs.

Each is a pure function `render(plan, ...) -> str`; the CLI chooses one and prints it.
"""

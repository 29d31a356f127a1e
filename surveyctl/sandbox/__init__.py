"""The sandbox: the marketplace's Buyer API implemented locally.

A Flask app over SQLite served on loopback by a real threaded WSGI server. It is the default
target of surveyctl when nothing is configured, and what the tests run against. It shares no
code with the client except the JSON Schemas of `schemas/api/`, and it is as strict as the
real service: a lenient fake would hide client bugs.
"""

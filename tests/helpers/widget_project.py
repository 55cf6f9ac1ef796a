"""A small project with both kinds of resources, the document the widget tests edit."""

from __future__ import annotations

PROJECT_TOML = '''
format = 1

[server]
name = "Widget tests"

[[resources]]
name = "readme"
title = "Read me"
uri = "docs://readme"
mime_type = "text/markdown"
reader = """def read(uri, params):
    return "# Hello"
"""

[[resources]]
name = "config"
uri = "docs://config"
mime_type = "application/json"
reader = """def read(uri, params):
    return {"a": 1}
"""

[[resources]]
name = "notes"
uri_template = "notes://{folder}/{id}"
mime_type = "application/json"
samples = ["notes://work/42", "notes://home/7"]
completions = { folder = ["work", "home", "archive"] }
reader = """def read(uri, params):
    return params
"""
'''

"""A small project with every kind of content and failure, for the resource-test runner's tests."""

from __future__ import annotations

from pathlib import Path

CHECKS_PROJECT = """\
format = 1

prelude = '''
CUSTOMERS = {"42": {"name": "Ada Lovelace", "tags": ["vip", "beta"], "active": True}}
'''

[server]
name = "Checks"
workers = 2
reader_timeout = 5.0

[[resources]]
name = "greeting"
uri = "text://greeting"
mime_type = "text/plain"
reader = '''
def read(uri, params):
    return "hello world\\nsecond line\\n"
'''

[[resources]]
name = "profile"
uri_template = "crm://customers/{id}/profile"
mime_type = "application/json"
samples = ["crm://customers/42/profile"]
reader = '''
def read(uri, params):
    if params["id"] not in CUSTOMERS:
        raise LookupError(f"No customer {params['id']}")
    return {"id": params["id"], **CUSTOMERS[params["id"]]}
'''

[[resources]]
name = "logo"
uri = "img://logo.png"
mime_type = "image/png"
reader = '''
def read(uri, params):
    return bytes(range(16))
'''

[[resources]]
name = "pair"
uri = "multi://pair"
reader = '''
def read(uri, params):
    return [text("one", "text/plain"), text("two", "text/markdown")]
'''

[[resources]]
name = "slow"
uri = "slow://read"
mime_type = "text/plain"
reader = '''
import time

def read(uri, params):
    time.sleep(0.05)
    return "late"
'''
"""

LOGO_SHA256 = "be45cb2605bf36bebde684841a28f0fd43c69850a3dce5fedba69928ee3a8991"
"""sha256(bytes(range(16)))."""


def write_project(directory: Path, tests_toml: str = "", *, name: str = "checks.toml") -> Path:
    """The checks project with `tests_toml` ([[tests]] tables) appended, written to `directory`."""
    path = directory / name
    path.write_text(CHECKS_PROJECT + ("\n" + tests_toml if tests_toml else ""), encoding="utf-8")
    return path

"""`[[upstreams]]` and a resource's `upstream` key: loaded, validated, saved as written, and in the JSON Schema."""

from __future__ import annotations

import tomllib

import jsonschema
import pytest

from resources_qt.errors import ValidationError
from resources_qt.lint.schema import project_schema
from resources_qt.project import Project, ProjectError, ResourceSpec, dumps_project, loads_project
from resources_qt.project.upstreams import UpstreamSpec

TEXT = '''format = 1

[server]
name = "Proxy"

# The colleague's server, read by the imported resources below.
[[upstreams]]
name = "colleague"
url = "http://127.0.0.1:8000/mcp"
timeout = 5.0
token_env = "COLLEAGUE_TOKEN"

[[upstreams]]
name = "local-tool"
command = "python server.py --quiet"
era = "handshake"

[[resources]]
name = "greeting"
title = "The greeting"
uri = "remote://greeting"
mime_type = "text/plain"
upstream = "colleague"
'''


def test_upstreams_load_and_save_as_written() -> None:
    project = loads_project(TEXT)
    assert project.upstreams == [
        UpstreamSpec(name="colleague", url="http://127.0.0.1:8000/mcp", timeout=5.0, token_env="COLLEAGUE_TOKEN"),
        UpstreamSpec(name="local-tool", command="python server.py --quiet", era="handshake"),
    ]
    assert project.resources[0].upstream == "colleague"
    assert dumps_project(project) == TEXT, "an unchanged project is saved exactly as it was read"
    project.upstreams[1].timeout = 9.0
    saved = dumps_project(project)
    assert "# The colleague's server" in saved and "timeout = 9.0" in saved
    assert loads_project(saved).upstreams[1].timeout == 9.0


def test_a_project_built_in_code_round_trips() -> None:
    project = Project(resources=[ResourceSpec(name="x", uri="a://x", upstream="u")],
                      upstreams=[UpstreamSpec(name="u", command="python s.py")])  # fmt: skip
    again = loads_project(dumps_project(project))
    assert again.upstreams == project.upstreams and again.resources == project.resources
    assert again.copy().upstreams == project.upstreams and again.copy().upstreams[0] is not again.upstreams[0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('upstream = "colleague"', 'upstream = "nobody"'), "upstream 'nobody' is not declared"),
        (('command = "python server.py --quiet"', 'url = "http://x/mcp"\ncommand = "python s.py"'), "one of them"),
        (('url = "http://127.0.0.1:8000/mcp"', 'url = "ftp://x"'), "must start with http"),
        (('timeout = 5.0', 'timeout = 0'), "timeout must be above 0"),
        (('era = "handshake"', 'era = "2025"'), "era must be"),
        (('name = "local-tool"', 'name = "colleague"'), "duplicate upstream name"),
        (('token_env = "COLLEAGUE_TOKEN"', 'token = "secret"'), "unknown key(s): token"),
        (('upstream = "colleague"', 'upstream = "colleague"\nreader = "def read(uri, params):\\n    return 1\\n"'),
         "not both"),
    ],
)  # fmt: skip
def test_invalid_upstreams_are_refused_naming_the_key(change: tuple[str, str], message: str) -> None:
    with pytest.raises((ProjectError, ValidationError), match=message.replace("(", r"\(").replace(")", r"\)")):
        loads_project(TEXT.replace(*change)).validate()


def test_the_schema_describes_upstreams() -> None:
    validator = jsonschema.Draft202012Validator(project_schema())
    assert not list(validator.iter_errors(tomllib.loads(TEXT)))
    bad = tomllib.loads(TEXT.replace('timeout = 5.0', 'timeout = "soon"'))
    assert list(validator.iter_errors(bad))
    unknown = tomllib.loads(TEXT.replace('token_env = "COLLEAGUE_TOKEN"', 'token = "x"'))
    assert list(validator.iter_errors(unknown))

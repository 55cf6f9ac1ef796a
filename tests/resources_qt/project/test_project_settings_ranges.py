"""[server] limits: every numeric setting has a range, refused outside it naming the key, the range and the line."""

from __future__ import annotations

import pytest

from resources_qt import ValidationError
from resources_qt.project import Project, ProjectError, ResourceSpec, ServerSettings, loads_project
from resources_qt.project.model import SERVER_RANGES

HEAD = 'format = 1\n\n[server]\nname = "x"\n'


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("workers", "100000", "workers must be between 1 and 64, not 100000"),
        ("workers", "0", "workers must be between 1 and 64, not 0"),
        ("memory_limit_mb", str(2**62), "memory_limit_mb must be between 64 and 1048576 MB"),
        ("memory_limit_mb", "16", "memory_limit_mb must be between 64 and 1048576 MB, not 16"),
        ("reader_timeout", "1e300", "reader_timeout must be between 0.1 and 3600 s"),
        ("reader_timeout", "0.01", "reader_timeout must be between 0.1 and 3600 s"),
        ("reader_timeout", "nan", "reader_timeout must be between 0.1 and 3600 s, not nan"),
        ("page_size", "10001", "page_size must be between 1 and 10000"),
        ("max_queued_reads", "0", "max_queued_reads must be between 1 and 100000"),
        ("resource_concurrency", "65", "resource_concurrency must be between 1 and 64"),
        ("max_processes", "70000", "max_processes must be between 1 and 65536"),
        ("max_file_size_mb", "0", "max_file_size_mb must be between 1 and 1048576 MB"),
        ("max_subscriptions", "1000001", "max_subscriptions must be between 1 and 1000000"),
        ("max_uri_length", "255", "max_uri_length must be between 256 and 1048576"),
        ("max_sessions", "0", "max_sessions must be between 1 and 1000000"),
        ("session_idle_timeout", "0.5", "session_idle_timeout must be between 1 and 604800 s"),
        ("cache_ttl_ms", "-1", "cache_ttl_ms must be between 0 and 31536000000 ms"),
    ],
)
def test_out_of_range_settings_name_key_range_and_line(key: str, value: str, shown: str) -> None:
    with pytest.raises(ProjectError) as caught:
        loads_project(HEAD + f"notifications = true\n{key} = {value}\n", source="limits.toml")
    error = caught.value
    assert shown in error.message
    assert error.line == 6 and error.field == key
    assert error.message.startswith("limits.toml:6: [server]")


def test_every_bound_is_accepted_and_loads_back() -> None:
    for key, (least, most, _unit) in SERVER_RANGES.items():
        for bound in (least, most):
            project = loads_project(HEAD + f"{key} = {bound!r}\n")
            assert getattr(project.server, key) == bound


def test_new_keys_have_their_contract_defaults_and_load() -> None:
    defaults = ServerSettings()
    assert (defaults.max_subscriptions, defaults.max_uri_length, defaults.max_sessions) == (1000, 8192, 10_000)
    assert defaults.mask_errors is False
    defaults.validate()
    text = HEAD + (
        "max_queued_reads = 10\nresource_concurrency = 3\nmax_processes = 50\nmax_file_size_mb = 5\n"
        "max_subscriptions = 7\nmax_uri_length = 1024\nmax_sessions = 9\nsession_idle_timeout = 30\n"
        "mask_errors = true\n"
    )
    server = loads_project(text).server
    assert (server.max_queued_reads, server.resource_concurrency, server.max_processes) == (10, 3, 50)
    assert (server.max_file_size_mb, server.max_subscriptions, server.max_uri_length) == (5, 7, 1024)
    assert (server.max_sessions, server.session_idle_timeout, server.mask_errors) == (9, 30.0, True)
    assert isinstance(server.session_idle_timeout, float)


def test_wrong_types_and_unknown_keys_are_still_refused() -> None:
    with pytest.raises(ProjectError, match="mask_errors must be a boolean, not a string") as caught:
        loads_project(HEAD + 'mask_errors = "yes"\n')
    assert caught.value.field == "mask_errors"
    with pytest.raises(ProjectError, match=r"unknown key\(s\): max_session\b") as caught:
        loads_project(HEAD + "max_session = 3\n")
    assert caught.value.line == 5


def test_validate_names_the_field_in_the_model() -> None:
    settings = ServerSettings(workers=65)
    with pytest.raises(ValidationError, match="workers must be between 1 and 64") as caught:
        settings.validate()
    assert caught.value.field == "workers"
    project = Project(server=ServerSettings(max_uri_length=10))
    with pytest.raises(ValidationError) as caught:
        project.validate()
    assert caught.value.field == "max_uri_length"


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (ResourceSpec(name=" ", uri="x://a"), "name"),
        (ResourceSpec(name="a", uri="x://a", uri_template="x://{id}"), "uri_template"),
        (ResourceSpec(name="a", uri="no scheme"), "uri"),
        (ResourceSpec(name="a", uri_template="x://{id"), "uri_template"),
        (ResourceSpec(name="a", uri_template="x://{id}", completions={"other": ["1"]}), "completions"),
        (ResourceSpec(name="a", uri="x://a", completions={"id": ["1"]}), "completions"),
        (ResourceSpec(name="a", uri="x://a", size=-1), "size"),
        (ResourceSpec(name="a", uri="x://a", samples=[" "]), "samples"),
        (ResourceSpec(name="a"), None),
    ],
)
def test_resource_validation_errors_carry_their_field(spec: ResourceSpec, field: str | None) -> None:
    with pytest.raises(ValidationError) as caught:
        spec.validate()
    assert caught.value.field == field, caught.value.message


def test_loader_errors_carry_the_field_of_the_resource_key() -> None:
    text = 'format = 1\n\n[[resources]]\nname = "a"\nuri = "x://a"\nsize = -3\n'
    with pytest.raises(ProjectError) as caught:
        loads_project(text)
    assert (caught.value.field, caught.value.line) == ("size", 6)
    dup = text.replace("size = -3\n", "") + '\n[[resources]]\nname = "a"\nuri = "x://b"\n'
    with pytest.raises(ProjectError) as caught:
        loads_project(dup)
    assert caught.value.field == "name"


def test_unchecked_values_loads_and_is_a_boolean() -> None:
    text = 'format = 1\n\n[[resources]]\nname = "files"\nuri_template = "files://{+path}"\nunchecked_values = true\n'
    assert loads_project(text).resources[0].unchecked_values is True
    assert loads_project(text.replace("unchecked_values = true\n", "")).resources[0].unchecked_values is False
    with pytest.raises(ProjectError, match="unchecked_values must be a boolean") as caught:
        loads_project(text.replace("= true", "= 1"))
    assert (caught.value.field, caught.value.line) == ("unchecked_values", 6)

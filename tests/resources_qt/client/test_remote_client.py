"""RemoteClient against real servers: the SDK's MCPServer and FastMCP 4 over stdio and HTTP, and `serve`."""

from __future__ import annotations

import shlex
import sys
import threading
from pathlib import Path

import pytest
from helpers.remote_servers import (
    TIMEOUT,
    connected,
    script_command,
    script_http,
    serve_http,
    stdio_children,
    wait_for,
)

from resources_qt.client import (
    CatalogueListed,
    RemoteClosed,
    RemoteConnected,
    RemoteError,
    RemoteFailed,
    TrafficSeen,
    parse_target,
)
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

GREETING = "remote://greeting"


def _remote_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name in ("remote-client", "remote-stderr")]


def _project(path: Path) -> Path:
    project = Project(
        server=ServerSettings(name="Served", version="7", instructions="served here", workers=1),
        resources=[ResourceSpec(name="g", uri="demo://g", mime_type="text/plain",
                                reader="def read(uri, params):\n    return 'served'\n")],
    )  # fmt: skip
    save_project(project, path)
    return path


def test_sdk_server_over_stdio_lists_reads_completes_and_leaves_nothing_behind() -> None:
    before = stdio_children()
    with connected(parse_target(script_command("sdk"))) as (client, log):
        wait_for(lambda: log.of(CatalogueListed), what="the first listing")
        summary = client.summary
        assert summary is not None
        assert (summary.name, summary.version, summary.instructions) == ("remote-sdk", "3.1",
                                                                         "Read remote://greeting first.")
        assert summary.modern, "auto chose the handshake with a server that speaks 2026-07-28"
        listed = log.of(CatalogueListed)[0]
        assert isinstance(listed, CatalogueListed)
        by_uri = {entry.uri: entry for entry in listed.resources}
        assert by_uri[GREETING].title == "The greeting"
        assert by_uri[GREETING].annotations == {"audience": ["user"], "priority": 0.5}
        assert [t.uri_template for t in listed.templates] == ["remote://users/{name}"]
        assert len(stdio_children() - before) == 1, "the stdio server is not a child of the studio"

        data = client.read("remote://data.json").result(TIMEOUT)
        assert data.ok and data.contents is not None
        assert (data.contents[0].mime_type, data.contents[0].text) == ("application/json", '{"answer": 42}')
        assert data.elapsed_ms > 0
        user = client.read("remote://users/alice").result(TIMEOUT)
        assert user.contents is not None and user.contents[0].text == "user alice"
        missing = client.read("remote://users/zed").result(TIMEOUT)
        assert not missing.ok and missing.error_code is not None and missing.error_message
        assert client.complete("remote://users/{name}", "name", "al").result(TIMEOUT) == ["alice", "albert"]
        methods = {(e.entry.direction, e.entry.method) for e in log.of(TrafficSeen) if isinstance(e, TrafficSeen)}
        assert ("out", "resources/read") in methods and ("out", "completion/complete") in methods
    assert log.of(RemoteClosed)
    wait_for(lambda: stdio_children() <= before, what="the stdio child ended")
    wait_for(lambda: not _remote_threads(), what="the client's threads ended")
    with pytest.raises(RemoteError, match="Not connected"):
        client.read(GREETING).result(TIMEOUT)


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
def test_sdk_server_over_http_in_either_era(tmp_path: Path, era: str) -> None:
    with script_http("sdk", tmp_path / "sdk.log") as served, connected(parse_target(served.url, era=era)) as (
        client, log,
    ):  # fmt: skip
        wait_for(lambda: log.of(CatalogueListed), what="the first listing")
        assert client.summary is not None
        assert client.summary.modern is (era == "2026-07-28")
        read = client.read(GREETING).result(TIMEOUT)
        assert read.contents is not None and read.contents[0].text == "hello from the SDK server"


def test_fastmcp_pages_are_all_followed_over_http_and_stdio(tmp_path: Path) -> None:
    with script_http("fastmcp", tmp_path / "fastmcp.log") as served:
        for target in (served.url, script_command("fastmcp")):
            with connected(parse_target(target)) as (client, _log):
                listed = client.refresh().result(TIMEOUT)
                # One entry a page: two resources and one template are three pages at least.
                assert listed.pages >= 3
                assert {r.uri for r in listed.resources} == {GREETING, "remote://data.json"}
                assert [t.uri_template for t in listed.templates] == ["remote://users/{name}"]
                read = client.read(GREETING).result(TIMEOUT)
                assert read.contents is not None and read.contents[0].text == "hello from FastMCP"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("http://127.0.0.1:9/mcp", "Cannot reach http://127.0.0.1:9/mcp"),
        ("no-such-command-for-remote-tests --flag", "Command not found: no-such-command-for-remote-tests"),
        (shlex.join([sys.executable, "-c", "import sys; sys.exit('the server cannot start: no config')"]),
         "The command exited before it answered: the server cannot start: no config"),
        (script_command("tools-only"), "offers no resources"),
    ],
)  # fmt: skip
def test_a_failed_connection_is_one_clear_line(target: str, expected: str) -> None:
    before = stdio_children()
    with connected(parse_target(target)) as (client, log):
        wait_for(lambda: log.of(RemoteFailed), what="the failure")
        failure = log.of(RemoteFailed)[0]
        assert isinstance(failure, RemoteFailed)
        assert expected in failure.message
        assert "\n" not in failure.message and "Traceback" not in failure.message
        assert not log.of(RemoteConnected)
        wait_for(lambda: log.of(RemoteClosed), what="the end")
        assert not client.is_connected
    wait_for(lambda: stdio_children() <= before, what="no child left")


def test_a_refused_token_is_named(tmp_path: Path) -> None:
    with serve_http(_project(tmp_path / "p.toml"), "--token", "right-token") as served:
        for token, expected in (("wrong", "refused the bearer token (401"), ("", "needs a bearer token (401")):
            with connected(parse_target(served.url, token=token)) as (_client, log):
                wait_for(lambda: log.of(RemoteFailed), what="the refusal")
                failure = log.of(RemoteFailed)[0]
                assert isinstance(failure, RemoteFailed) and expected in failure.message
        with connected(parse_target(served.url, token="right-token")) as (client, log):
            wait_for(lambda: log.of(RemoteConnected), what="connected with the token")
            read = client.read("demo://g").result(TIMEOUT)
            assert read.contents is not None and read.contents[0].text == "served"


def test_a_stdio_server_that_dies_is_reported_and_cleaned_up() -> None:
    before = stdio_children()
    with connected(parse_target(script_command("sdk"))) as (_client, log):
        wait_for(lambda: log.of(CatalogueListed), what="connected")
        (child,) = stdio_children() - before
        import os
        import signal

        os.kill(child, signal.SIGKILL)
        wait_for(lambda: log.of(RemoteFailed), what="the loss reported")
        failure = log.of(RemoteFailed)[0]
        assert isinstance(failure, RemoteFailed) and "ended the connection" in failure.message
        wait_for(lambda: log.of(RemoteClosed), what="the end")
    wait_for(lambda: not _remote_threads(), what="the client's threads ended")


def test_targets_are_parsed_into_urls_and_command_lines() -> None:
    http = parse_target("  https://example.com/mcp ", token="sekrit", era="handshake")
    assert (http.url, http.token, http.sdk_mode, http.is_http) == ("https://example.com/mcp", "sekrit", "legacy", True)
    assert "sekrit" not in repr(http)
    command = parse_target("npx -y '@scope/server' --dir 'a b'")
    assert command.command == ("npx", "-y", "@scope/server", "--dir", "a b") and command.sdk_mode == "auto"
    for text, kwargs, message in (("", {}, "target:"), ("python 'unclosed", {}, "cannot be split"),
                                  ("python s.py", {"token": "x"}, "token:"), ("http://x/mcp", {"era": "2025"}, "era:")):
        with pytest.raises(RemoteError, match=message):
            parse_target(text, **kwargs)  # type: ignore[arg-type]


def test_closing_while_a_silent_server_is_still_connecting_ends_it() -> None:
    before = stdio_children()
    silent = shlex.join([sys.executable, "-c", "import time; time.sleep(120)"])
    with connected(parse_target(silent)) as (client, log):
        wait_for(lambda: len(stdio_children() - before) == 1, what="the child started")
        assert not client.is_connected
    assert log.of(RemoteClosed) and not log.of(RemoteConnected)
    wait_for(lambda: stdio_children() <= before, what="the silent child ended")
    wait_for(lambda: not _remote_threads(), what="the client's threads ended")

"""RemoteClient against the TypeScript SDK's server (tests/helpers/ts_server), over stdio and Streamable HTTP."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers.remote_servers import TIMEOUT, connected, stdio_children, wait_for

from resources_qt.client import CatalogueListed, RemoteClosed, parse_target

SERVER = Path(__file__).resolve().parents[2] / "helpers" / "ts_server"
NODE = shutil.which("node")

# .ci/run installs the server's one package (`npm ci` in tests/helpers/ts_server); elsewhere run that once.
pytestmark = pytest.mark.skipif(
    NODE is None or not (SERVER / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(),
    reason="the TypeScript SDK server needs node and `npm ci` in tests/helpers/ts_server",
)


def _command() -> str:
    return shlex.join([str(NODE), str(SERVER / "server.mjs"), "stdio"])


@contextmanager
def _http() -> Iterator[str]:
    process = subprocess.Popen([str(NODE), str(SERVER / "server.mjs"), "http"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()
        assert port.isdigit(), f"the TypeScript server printed {port!r}"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(30)
        if process.stdout is not None:
            process.stdout.close()


def _browse(target: str) -> None:
    with connected(parse_target(target)) as (client, log):
        wait_for(lambda: log.of(CatalogueListed), what="the first listing")
        summary = client.summary
        assert summary is not None
        assert (summary.name, summary.version, summary.instructions) == ("remote-ts", "1.32.2-test",
                                                                         "A TypeScript SDK server.")  # fmt: skip
        assert not summary.modern, "the TypeScript SDK speaks the handshake era"
        listed = log.of(CatalogueListed)[0]
        assert isinstance(listed, CatalogueListed)
        assert [(r.uri, r.title, r.mime_type) for r in listed.resources] == [
            ("ts://greeting", "The TS greeting", "text/plain")]
        assert [t.uri_template for t in listed.templates] == ["ts://users/{name}"]
        greeting = client.read("ts://greeting").result(TIMEOUT)
        assert greeting.contents is not None and greeting.contents[0].text == "hello from the TypeScript SDK"
        user = client.read("ts://users/grace").result(TIMEOUT)
        assert user.contents is not None and user.contents[0].text == "user grace"
        failed = client.read("ts://users/nobody").result(TIMEOUT)
        assert not failed.ok and failed.error_message is not None and "no user nobody" in failed.error_message
        assert client.complete("ts://users/{name}", "name", "a").result(TIMEOUT) == ["ada", "alan"]
    assert log.of(RemoteClosed)


def test_typescript_sdk_server_over_stdio_and_nothing_left_behind() -> None:
    before = stdio_children()
    _browse(_command())
    wait_for(lambda: stdio_children() <= before, what="the node child ended")


def test_typescript_sdk_server_over_streamable_http() -> None:
    with _http() as url:
        _browse(url)

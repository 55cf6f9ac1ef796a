"""`serve --metrics`: a real serve process, real SDK clients of both eras, and real scrapes of /metrics."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from engine_support import connect
from helpers.redis_server import redis_server
from helpers.serve_process import ROOT, ServeProcess, scrape, serve_env, value
from mcp.shared.exceptions import MCPError

from resources_qt import CacheHint
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.project.model import WatchSpec

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

READS = "resource_studio_reads_total"


def _project(**server: object) -> Project:
    resources = [
        ResourceSpec(name="greeting", uri="demo://greeting", mime_type="text/plain",
                     reader="def read(uri, params):\n    return 'hello'\n"),
        ResourceSpec(name="item", uri_template="demo://items/{id}", mime_type="text/plain",
                     reader="def read(uri, params):\n    if params['id'] == '0':\n        raise NotFound('no item 0')\n"
                            "    return 'item ' + params['id']\n"),
        ResourceSpec(name="broken", uri="demo://broken", reader="def read(uri, params):\n    raise KeyError('gone')\n"),
        ResourceSpec(name="slow", uri="demo://slow",
                     reader="import time\n\ndef read(uri, params):\n    time.sleep(30)\n    return 'late'\n"),
        ResourceSpec(name="hinted", uri="demo://hinted", reader="def read(uri, params):\n    return 'kept'\n",
                     cache=CacheHint(60_000, "public")),
    ]
    settings = ServerSettings(name="metrics", version="1", notifications=True, subscriptions=True, workers=2,
                              reader_timeout=1.0, **server)  # type: ignore[arg-type]
    return Project(server=settings, resources=resources)


async def _read_everything(url: str, mode: str) -> None:
    async with connect(url, mode) as client:
        assert (await client.read_resource("demo://greeting", cache_mode="bypass")).contents[0].text == "hello"
        assert (await client.read_resource("demo://items/7", cache_mode="bypass")).contents[0].text == "item 7"
        for uri in ("demo://items/0", "demo://nothing/here", "demo://broken", "demo://slow"):
            with pytest.raises(MCPError):
                await client.read_resource(uri, cache_mode="bypass")


async def test_reads_are_counted_by_resource_and_outcome_in_both_eras(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    with ServeProcess(path, "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0") as serve:
        url, metrics = serve.mcp_url, serve.metrics_url
        for mode in ("legacy", "2026-07-28"):
            await _read_everything(url, mode)
        async with connect(url, "legacy") as client:
            for _ in range(2):  # the second answer comes from the read cache
                assert (await client.read_resource("demo://hinted", cache_mode="bypass")).contents[0].text == "kept"
            while_open = scrape(metrics)
        after = scrape(metrics)
    expected = {
        ("greeting", "ok"): 2, ("item", "ok"): 2, ("item", "not_found"): 2, ("", "not_found"): 2,
        ("broken", "error"): 2, ("slow", "timeout"): 2, ("hinted", "ok"): 1, ("hinted", "cached"): 1,
    }  # fmt: skip
    counted = {
        (dict(labels)["resource"], dict(labels)["outcome"]): sample
        for (name, labels), sample in after.items() if name == READS
    }  # fmt: skip
    assert counted == expected
    # Every read is timed; the reader's share only where a reader ran (not the cache hit, nor the unmatched URI).
    for resource, reads in {"greeting": 2, "item": 4, "broken": 2, "slow": 2, "hinted": 2, "": 2}.items():
        assert value(after, "resource_studio_read_seconds_count", resource=resource) == reads
    for resource, calls in {"greeting": 2, "item": 4, "broken": 2, "slow": 2, "hinted": 1}.items():
        assert value(after, "resource_studio_reader_seconds_count", resource=resource) == calls
    assert value(after, "resource_studio_reader_seconds_count", resource="") == 0
    assert value(after, "resource_studio_reader_seconds_sum", resource="slow") >= 2 * 0.9
    assert value(after, "resource_studio_read_cache_hits_total") == 1
    assert value(while_open, "resource_studio_sessions", transport="http", era="handshake") == 1
    assert value(after, "resource_studio_sessions", transport="http", era="handshake") == 0
    assert value(after, "resource_studio_workers", state="configured") == 2
    assert value(after, "resource_studio_workers", state="shared") == 0  # no async def reader in the project
    assert value(after, "resource_studio_read_queue") == 0
    assert value(after, "resource_studio_bus", state="none") == 1


async def test_listen_streams_subscriptions_and_notification_origins(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("one", encoding="utf-8")
    project = _project()
    project.resources.append(
        ResourceSpec(name="watched", uri="demo://watched", watch=WatchSpec(files=["data.txt"]),
                     reader="def read(uri, params):\n    return (PROJECT_DIR / 'data.txt').read_text()\n")
    )
    path = save_project(project, tmp_path / "p.toml")
    with (
        redis_server(tmp_path) as redis,
        ServeProcess(path, "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--watch", "--bus", redis.url,
                     "--log-level", "info") as serve,
    ):
        url, metrics = serve.mcp_url, serve.metrics_url
        serve.url(r"(Sharing) notifications")
        serve.url(r"(Watching) \d+ folder")
        async with (
            connect(url, "2026-07-28") as client,
            client.listen(resources_list_changed=True, resource_subscriptions=["demo://watched"]) as sub,
        ):
            samples = scrape(metrics)
            assert value(samples, "resource_studio_sessions", transport="http", era="2026-07-28") == 1
            assert value(samples, "resource_studio_subscriptions") == 1
            events = aiter(sub)
            for round in range(1, 10):  # a watched data file; new content each time until its update is heard
                data.write_text(f"round {round}", encoding="utf-8")
                with anyio.move_on_after(3):
                    await anext(events)
                    break
            else:
                raise AssertionError(f"no update for the watched file: {serve.lines}")
            _notify_cli(redis.url, "updated", "demo://watched")  # `resource-studio notify`, over the bus
            with anyio.fail_after(30):
                await anext(events)
            project.resources[-1].reader = "def read(uri, params):\n    return 'reloaded'\n"
            save_project(project, path)  # a --watch reload of the project file: an edit
            with anyio.fail_after(30):
                await anext(events)
        samples = scrape(metrics)
    assert _notifications(samples, "watch", kind="updated") >= 1
    assert _notifications(samples, "cli", kind="updated") == 1
    assert _notifications(samples, "edit") >= 1
    assert _notifications(samples, "bus") == 0
    assert value(samples, "resource_studio_bus", state="connected") == 1


def _notifications(samples: dict, origin: str, kind: str | None = None) -> float:  # type: ignore[type-arg]
    return sum(
        sample for (name, labels), sample in samples.items()
        if name == "resource_studio_notifications_total" and dict(labels)["origin"] == origin
        and (kind is None or dict(labels)["kind"] == kind)
    )  # fmt: skip


def _notify_cli(bus: str, *command: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "studio", "notify", "--bus", bus, "--server-name", "metrics", *command],
        capture_output=True, text=True, env=serve_env(), cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "studio", "serve", *args], capture_output=True, text=True,
                          env=env or serve_env(), cwd=ROOT, timeout=60, check=False)  # fmt: skip


def test_metrics_off_loopback_need_the_flag_and_errors_are_one_line(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    public = _serve(str(path), "--http", "0", "--metrics", "0.0.0.0:0")
    from_env = _serve(str(path), "--http", "0", env=serve_env({"RESOURCE_STUDIO_METRICS": "0.0.0.0:0"}))
    bad = _serve(str(path), "--http", "0", "--metrics", "host:notaport")
    flag_alone = _serve(str(path), "--http", "0", "--metrics-public")
    for result in (public, from_env, bad, flag_alone):
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("resource-studio serve: error: "), lines
    assert "--metrics-public" in public.stderr and "0.0.0.0" in public.stderr
    assert "$RESOURCE_STUDIO_METRICS" in from_env.stderr
    assert "[HOST:]PORT" in bad.stderr
    assert "needs --metrics" in flag_alone.stderr


def test_metrics_address_from_the_environment_and_public_with_the_flag(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    with ServeProcess(path, "--http", "127.0.0.1:0", env=serve_env({"RESOURCE_STUDIO_METRICS": "127.0.0.1:0"})) as s:
        assert value(scrape(s.metrics_url), "resource_studio_workers", state="configured") == 2
    with ServeProcess(path, "--http", "127.0.0.1:0", "--metrics", "0.0.0.0:0", "--metrics-public") as s:
        port = s.metrics_url.rsplit(":", 1)[1]
        assert value(scrape(f"http://127.0.0.1:{port}"), "resource_studio_subscriptions") == 0

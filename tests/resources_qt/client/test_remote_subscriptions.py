"""RemoteClient subscriptions in both eras, against `resource-studio serve` itself (watched data, --watch reloads)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.remote_servers import TIMEOUT, connected, script_command, serve_http, wait_for

from resources_qt.client import (
    CatalogueListed,
    NotificationReceived,
    RemoteError,
    SubscriptionChanged,
    parse_target,
)
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.project.model import WatchSpec

DATA = "demo://data"
UPDATED = "notifications/resources/updated"
LIST_CHANGED = "notifications/resources/list_changed"


def _project(path: Path, *extra: ResourceSpec) -> Project:
    project = Project(
        server=ServerSettings(name="Watched", version="2", notifications=True, subscriptions=True, workers=1),
        resources=[
            ResourceSpec(name="data", uri=DATA, mime_type="text/plain", watch=WatchSpec(files=["data.txt"]),
                         reader="def read(uri, params):\n    return (PROJECT_DIR / 'data.txt').read_text()\n"),
            *extra,
        ],
    )  # fmt: skip
    save_project(project, path)
    return project


def _updates(log: object) -> list[str]:
    return [e.uri for e in log.of(NotificationReceived) if isinstance(e, NotificationReceived) and e.method == UPDATED]  # type: ignore[attr-defined]


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
def test_subscribed_updates_and_list_changes_arrive_in_either_era(tmp_path: Path, era: str) -> None:
    (tmp_path / "data.txt").write_text("first")
    path = tmp_path / "watched.toml"
    _project(path)
    with serve_http(path, "--watch") as served, connected(parse_target(served.url, era=era)) as (client, log):
        wait_for(lambda: log.of(CatalogueListed), what="the first listing")
        assert client.summary is not None and client.summary.modern is (era == "2026-07-28")
        client.subscribe(DATA).result(TIMEOUT)
        assert SubscriptionChanged(DATA, True) in log.of(SubscriptionChanged)
        assert client.subscriptions == {DATA}
        # The watch thread may come up after the subscription: write new content until the update is heard.
        for n in range(200):
            (tmp_path / "data.txt").write_text(f"change {n}")
            try:
                wait_for(lambda: DATA in _updates(log), timeout=0.5)
                break
            except AssertionError:
                continue
        assert DATA in _updates(log)
        read = client.read(DATA).result(TIMEOUT)
        assert read.contents is not None and read.contents[0].text.startswith("change")

        # A new resource in the project file: list_changed, and the catalogue is listed again with it.
        _project(path, ResourceSpec(name="more", uri="demo://more", mime_type="text/plain",
                                    reader="def read(uri, params):\n    return 'more'\n"))  # fmt: skip
        wait_for(lambda: any(isinstance(e, CatalogueListed) and "demo://more" in {r.uri for r in e.resources}
                             for e in log.of(CatalogueListed)), what="the catalogue listed again")  # fmt: skip
        assert any(isinstance(e, NotificationReceived) and e.method == LIST_CHANGED
                   for e in log.of(NotificationReceived))  # fmt: skip

        client.unsubscribe(DATA).result(TIMEOUT)
        assert client.subscriptions == frozenset()
        assert SubscriptionChanged(DATA, False) in log.of(SubscriptionChanged)


def test_subscribing_where_the_server_offers_none_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plain.toml"
    save_project(Project(server=ServerSettings(name="Plain", workers=1, subscriptions=False),
                         resources=[ResourceSpec(name="g", uri="demo://g", reader="def read(uri, params):\n"
                                                 "    return 'g'\n")]), path)  # fmt: skip
    with serve_http(path) as served, connected(parse_target(served.url)) as (client, log):
        wait_for(lambda: log.of(CatalogueListed), what="the first listing")
        with pytest.raises(RemoteError, match="offers no subscriptions"):
            client.subscribe("demo://g").result(TIMEOUT)


def test_a_stdio_sdk_server_acknowledges_a_listen_subscription() -> None:
    with connected(parse_target(script_command("sdk"), era="2026-07-28")) as (client, log):
        wait_for(lambda: log.of(CatalogueListed), what="the first listing")
        client.subscribe("remote://greeting").result(TIMEOUT)
        assert client.subscriptions == {"remote://greeting"}

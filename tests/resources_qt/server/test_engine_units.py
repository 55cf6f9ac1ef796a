"""Engine pieces without a network: cursors, listing cache, completions, reload diffs, loop thread, preview."""

from __future__ import annotations

import asyncio
import base64
import threading
from typing import Any

import pytest
from helpers.waiting import eventually_async
from mcp.shared.exceptions import MCPError

from resources_qt import Resource, Resources
from resources_qt.notifications import ListChanged, Notification, Updated
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.server import ResourceServer
from resources_qt.server.completion import complete_values
from resources_qt.server.events import NotificationSent, Traffic
from resources_qt.server.factory import build_server
from resources_qt.server.loopthread import LoopThread
from resources_qt.server.notify import Notifier
from resources_qt.server.paging import ListingCache, decode_cursor, encode_cursor
from resources_qt.server.reload import apply_project, apply_spec, served_specs, uris_of
from resources_qt.server.sessions import Session, SessionRegistry


def _reader(uri: str) -> str:
    return uri


def test_cursor_round_trip_and_foreign_cursors() -> None:
    assert decode_cursor(encode_cursor("d", 250, "a:b")) == ("d", 250, "a:b")
    negative = base64.urlsafe_b64encode(b"rs2:d:-5:x").decode()
    for bad in ("abc", encode_cursor("d", 1, "x").replace("=", "") + "!!", negative, "cnMxOjU="):  # last: "rs1:5"
        with pytest.raises(MCPError) as info:
            decode_cursor(bad)
        assert info.value.code == -32602


def test_listing_cache_splits_pages_and_follows_changes() -> None:
    resources = Resources()
    for i in range(7):
        resources.register_direct_resource(f"r{i}", f"x://{i}", "", "text/plain", _reader)
    resources.register_template_resource("t", "x://t/{id}", "", "text/plain", _reader)
    cache = ListingCache(resources)
    page, cursor = cache.direct_page(None, 5)
    assert [r.uri for r in page] == [f"x://{i}" for i in range(5)]
    rest, end = cache.direct_page(cursor, 5)
    assert [r.uri for r in rest] == ["x://5", "x://6"] and end is None
    templates, _ = cache.template_page(None, 5)
    assert [t.uri_template for t in templates] == ["x://t/{id}"]
    resources.remove("r0")
    page, _ = cache.direct_page(None, 5)
    assert page[0].uri == "x://1"
    with pytest.raises(MCPError):
        cache.direct_page("cnMxOjU=", 5)


def test_completions_list_prefix_and_callable() -> None:
    async def callable_completer(name: str, value: str, context: dict[str, str]) -> list[str]:
        return [f"{context.get('a', '')}{value}{i}" for i in range(2)]

    def broken(name: str, value: str, context: dict[str, str]) -> list[str]:
        raise KeyError("nope")

    resource = Resource(name="r", uri_template="x://{a}/{b}/{c}", reader=_reader,
                        completions={"a": ["Apple", "apricot", "Banana"], "b": callable_completer, "c": broken})
    assert asyncio.run(complete_values(resource, "a", "ap", {})) == ["Apple", "apricot"]
    assert asyncio.run(complete_values(resource, "b", "v", {"a": "A"})) == ["Av0", "Av1"]
    assert asyncio.run(complete_values(resource, "missing", "", {})) == []
    with pytest.raises(MCPError) as info:
        asyncio.run(complete_values(resource, "c", "", {}))
    assert info.value.code == -32000 and "KeyError" in info.value.message


def _spec(name: str, uri: str, body: str = "a") -> ResourceSpec:
    return ResourceSpec(name=name, uri=uri, reader=body)


def _make(spec: ResourceSpec) -> Resource:
    return spec.to_resource(_reader)


def test_reload_diff_adds_removes_and_replaces_only_what_changed() -> None:
    old = Project(resources=[_spec("a", "x://a"), _spec("b", "x://b"), _spec("c", "x://c")])
    resources = Resources()
    for spec in old.resources:
        resources.add_resource(_make(spec))
    events: list[tuple[str, str]] = []
    resources.add_listener(lambda kind, r: events.append((kind, r.name)))
    new = Project(resources=[_spec("a", "x://a"), _spec("b", "x://b", "changed"),
                             ResourceSpec(name="c", uri="x://c", title="Titled", reader="a"), _spec("d", "x://d")])
    summary = apply_project(resources, old, new, _make)
    assert summary.added == ["d"] and summary.removed == []
    assert summary.changed == ["b", "c"] and summary.relisted == ["c"]
    assert events == [("added", "d")]  # in-place replacements do not notify by themselves
    assert resources.get("c").title == "Titled"
    removal = apply_spec(resources, _spec("d", "x://d"), None, _make)
    assert removal.removed == ["d"] and resources.get("d") is None


def test_loop_thread_reports_a_crash() -> None:
    errors: list[BaseException | None] = []
    done = threading.Event()

    async def main() -> None:
        raise RuntimeError("boom")

    thread = LoopThread("crash-test")
    thread.start(main, on_exit=lambda error: (errors.append(error), done.set()))
    assert done.wait(10)
    assert isinstance(errors[0], RuntimeError) and str(errors[0]) == "boom"


def test_read_for_preview_maps_errors_like_a_read() -> None:
    resources = Resources()
    resources.register_direct_resource("ok", "x://ok", "", "text/plain", _reader)
    resources.register_direct_resource("bad", "x://bad", "", "text/plain", lambda uri: None)
    server = ResourceServer(resources, name="p", version="1")

    async def run() -> list[Any]:
        return [
            await server.read_for_preview("x://ok"),
            await server.read_for_preview("x://bad"),
            await server.read_for_preview("x://none"),
            await server.read_for_preview("x://none", protocol_version="2026-07-28"),
        ]

    ok, bad, missing, modern = asyncio.run(run())
    assert ok.ok and ok.contents[0].text == "x://ok" and ok.resource_name == "ok"
    assert bad.error_code == -32000 and "returned None" in (bad.error_message or "")
    assert missing.error_code == -32002 and missing.error_data == {"uri": "x://none"}
    assert modern.error_code == -32602


def test_constructor_rejects_bad_arguments() -> None:
    with pytest.raises(TypeError):
        ResourceServer([], name="x", version="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ResourceServer(Resources(), name="", version="1")
    with pytest.raises(ValueError):
        ResourceServer(Resources(), name="x", version="1", page_size=0)


class _Recording(Session):
    def __init__(self, session_id: str, *, broken: bool = False) -> None:
        super().__init__(session_id=session_id, transport="test", client_name="", client_version="",
                         protocol_version="2025-11-25", subscriptions=["x://1"])
        self.broken = broken
        self.sent: list[str] = []

    async def send(self, notification: Notification) -> None:
        if self.broken:
            raise ConnectionResetError("peer gone")
        self.sent.append(notification.uri or "*")


@pytest.mark.allow_error_logs  # the logged error is what the test provokes
def test_a_failing_session_is_dropped_and_the_others_still_notified() -> None:
    async def scenario() -> None:
        registry = SessionRegistry()
        good, bad = _Recording("good"), _Recording("bad", broken=True)
        registry.add(bad)
        registry.add(good)
        events: list[Any] = []
        notifier = Notifier(registry=registry, emit=events.append, observing=lambda: True,
                            drop_session=registry.remove)
        assert await notifier.send(Updated("x://1")) == 2  # queued for both; the failure shows when it is sent
        await eventually_async(lambda: good.sent == ["x://1"] and registry.get("bad") is None, 5)
        assert await notifier.send(Updated("x://1", session_id="good")) == 1
        assert await notifier.send(ListChanged()) == 1
        await eventually_async(lambda: good.sent == ["x://1", "x://1", "*"], 5)
        sent = [e for e in events if isinstance(e, NotificationSent)]
        assert [(e.method, e.uri, e.recipients) for e in sent] == [
            ("notifications/resources/updated", "x://1", 2),
            ("notifications/resources/updated", "x://1", 1),
            ("notifications/resources/list_changed", "", 1),
        ]
        assert [(e.session_id, e.method) for e in events if isinstance(e, Traffic)] == [
            ("good", "notifications/resources/updated"),
            ("good", "notifications/resources/updated"),
            ("good", "notifications/resources/list_changed"),
        ]

    asyncio.run(scenario())


class _Stuck(_Recording):
    """A subscriber whose client stopped reading: every send waits forever."""

    async def send(self, notification: Notification) -> None:
        await asyncio.Event().wait()


def test_a_session_that_stops_reading_delays_no_one_and_is_dropped_once_its_outbox_is_full(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> list[str]:
        registry = SessionRegistry()
        stuck, good = _Stuck("stuck"), _Recording("good")
        registry.add(stuck)
        registry.add(good)
        ended: list[str] = []

        def end(session_id: str) -> None:
            ended.append(session_id)
            session = registry.remove(session_id)
            assert session is not None
            session.stop_sending()

        notifier = Notifier(registry=registry, emit=lambda e: None, observing=lambda: False, drop_session=end,
                            queue_size=lambda: 4)
        counts = [await notifier.send(Updated("x://1")) for _ in range(7)]
        await eventually_async(lambda: len(good.sent) == 7, 5)
        # One send under way plus 4 waiting: the 6th finds the outbox full.
        assert counts == [2, 2, 2, 2, 2, 1, 1]
        assert stuck.outbox is not None and stuck.outbox.closed and len(stuck.outbox) == 0
        return ended

    assert asyncio.run(scenario()) == ["stuck"]
    (warning,) = [r for r in caplog.records if r.levelname == "WARNING"]
    assert "stuck" in warning.getMessage() and "not reading" in warning.getMessage()


def test_reload_swaps_uris_and_keeps_the_old_version_of_a_refused_edit() -> None:
    old = Project(resources=[_spec("a", "x://1"), _spec("b", "x://2"), _spec("c", "x://3")])
    resources = Resources()
    for spec in old.resources:
        resources.add_resource(_make(spec))
    new = Project(resources=[_spec("a", "x://2"), _spec("b", "x://1"), _spec("c", "x://1", "clash")])
    summary = apply_project(resources, old, new, _make)
    assert resources.get("a").uri == "x://2" and resources.get("b").uri == "x://1"
    assert list(summary.refused) == ["c"] and "x://1" in summary.refused["c"]
    assert resources.get("c").uri == "x://3"  # the previous version keeps serving
    served = served_specs(resources, old, new, summary)
    assert [(s.name, s.uri) for s in served] == [("a", "x://2"), ("b", "x://1"), ("c", "x://3")]


def test_a_blank_subscribed_uri_does_not_stop_the_announcement_of_the_others() -> None:
    resources = Resources()
    resources.register_direct_resource("a", "x://a", "", "text/plain", _reader)
    server = ResourceServer(resources, name="u", version="1")
    session = _Recording("s")
    server.registry.add(session)
    for uri in (" ", "x://a"):
        server.registry.subscribe("s", uri)
    assert uris_of(server, ["a"], {}) == ["x://a"]


def test_preview_of_a_blank_uri_says_it_is_empty() -> None:
    server = ResourceServer(Resources(), name="p", version="1")
    outcome = asyncio.run(server.read_for_preview("  "))
    assert (outcome.error_code, outcome.error_message, outcome.error_data) == (
        -32602, "URI must not be empty", {"uri": "  "})


def _listed(cache: ListingCache, cursor: str | None, size: int) -> tuple[list[str], str | None]:
    page, next_cursor = cache.direct_page(cursor, size)
    return [r.name for r in page], next_cursor


def test_cursors_neither_skip_nor_repeat_when_the_collection_changes_between_pages() -> None:
    resources = Resources()
    for i in range(6):
        resources.register_direct_resource(f"r{i}", f"x://{i}", "", "text/plain", _reader)
    cache = ListingCache(resources)
    first, cursor = _listed(cache, None, 3)
    assert first == ["r0", "r1", "r2"]
    resources.remove("r0")  # before the cursor: an offset would now skip r3
    assert _listed(cache, cursor, 3) == (["r3", "r4", "r5"], None)

    first, cursor = _listed(cache, None, 2)
    assert first == ["r1", "r2"]
    resources.register_direct_resource("r6", "x://6", "", "text/plain", _reader)
    resources.remove("r2")  # the cursor's own item is gone: resume where it stood
    rest, cursor = _listed(cache, cursor, 2)
    assert rest == ["r3", "r4"]
    assert _listed(cache, cursor, 2) == (["r5", "r6"], None)


def test_a_cursor_is_tied_to_its_listing() -> None:
    resources = Resources()
    for i in range(3):
        resources.register_direct_resource(f"r{i}", f"x://{i}", "", "text/plain", _reader)
        resources.register_template_resource(f"t{i}", f"x://t{i}/{{id}}", "", "text/plain", _reader)
    cache = ListingCache(resources)
    _, direct_cursor = cache.direct_page(None, 1)
    _, template_cursor = cache.template_page(None, 1)
    for call, cursor in ((cache.template_page, direct_cursor), (cache.direct_page, template_cursor)):
        with pytest.raises(MCPError) as info:
            call(cursor, 1)
        assert info.value.code == -32602


def test_event_records_with_many_fields_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        NotificationSent("notifications/resources/updated", "x://1", 1)  # type: ignore[misc]
    sent = NotificationSent(method="notifications/resources/updated", uri="x://1", recipients=1)
    assert (sent.method, sent.uri, sent.recipients) == ("notifications/resources/updated", "x://1", 1)


def test_build_server_follows_the_project_settings() -> None:
    project = Project(server=ServerSettings(name="built", version="9", instructions="hi", page_size=7,
                                            notifications=True, subscriptions=False))
    server = build_server(project, Resources())
    assert (server.name, server.version, server.instructions, server.page_size) == ("built", "9", "hi", 7)
    assert server.enable_resource_notifications and not server.enable_resource_subscriptions

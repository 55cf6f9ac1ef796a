"""ServerController builds its engine on first use: what was edited before serves as if the engine had existed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from resources_qt.errors import ValidationError
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.project.model import WatchSpec
from resources_qt.qt import PreviewOutcome, ServerController

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

WAIT = 20_000


def _reader(text: str) -> str:
    return f"def read(uri, params):\n    return WORD + ' {text} ' + params.get('id', '')\n"


def _spec(name: str, *, uri: str = "", template: str = "", text: str = "", **more: Any) -> ResourceSpec:
    return ResourceSpec(name=name, uri=uri, uri_template=template, mime_type="text/plain",
                        reader=_reader(text or name), **more)  # fmt: skip


def _base() -> Project:
    return Project(server=ServerSettings(name="lazy", workers=1), resources=[_spec("seed", uri="demo://seed")])


def _edit(ctl: ServerController) -> list[str]:
    """Edits of every kind the window makes, one refused; returns the refusals' messages."""
    refused: list[str] = []
    settings = ServerSettings(name="lazy", version="3", instructions="Read me", notifications=True,
                              subscriptions=True, page_size=2, workers=1)  # fmt: skip
    ctl.apply_project(Project(server=settings, prelude="WORD = 'one'\n", resources=[
        _spec("a", uri="demo://a"), _spec("b", uri="demo://b"), _spec("c", uri="demo://c"),
        _spec("item", template="demo://items/{id}", completions={"id": ["alpha", "beta"]}),
        _spec("watched", uri="demo://watched", watch=WatchSpec(interval=30.0)),
    ]))  # fmt: skip
    clash = ctl.project.copy()
    clash.resources.append(_spec("twin", uri="demo://a"))  # the URI "a" serves: refused, the rest applies
    clash.resources[0] = _spec("a", uri="demo://a", text="edited")
    try:
        ctl.apply_project(clash)
    except ValidationError as exc:
        refused.append(exc.message)
    ctl.apply_resource("b", _spec("b2", uri="demo://b2"))
    ctl.apply_resource("c", None)
    ctl.apply_resource(None, _spec("d", uri="demo://d"))
    try:
        ctl.apply_resource(None, _spec("e", uri="demo://d"))
    except ValidationError as exc:
        refused.append(exc.message)
    ctl.set_prelude("WORD = 'two'\n")
    ctl.set_capabilities(False, True)
    return refused


async def _what_is_served(url: str) -> dict[str, Any]:
    async with Client(url, mode="legacy", read_timeout_seconds=15) as client:
        resources, cursor = [], None
        while True:  # page_size 2: several pages
            page = await client.list_resources(cursor=cursor)
            resources += [(r.name, str(r.uri)) for r in page.resources]
            cursor = page.next_cursor
            if not cursor:
                break
        templates = [(t.name, t.uri_template) for t in (await client.list_resource_templates()).resource_templates]
        reads = {}
        for _, uri in [*resources, ("item", "demo://items/alpha"), ("gone", "demo://c")]:
            try:
                contents = (await client.read_resource(uri)).contents
                reads[uri] = [getattr(c, "text", None) for c in contents]
            except Exception as exc:  # the error a client sees is part of what is served
                reads[uri] = [type(exc).__name__, str(exc)]
        caps = client.server_capabilities
        assert caps is not None and caps.resources is not None and client.server_info is not None
        return {"resources": resources, "templates": templates, "reads": reads,
                "list_changed": caps.resources.list_changed, "subscribe": caps.resources.subscribe,
                "server": (client.server_info.name, client.server_info.version),
                "instructions": client.instructions}  # fmt: skip


def _served(qtbot: Any, ctl: ServerController) -> dict[str, Any]:
    with qtbot.waitSignal(ctl.server_started, timeout=WAIT) as started:
        ctl.start_http("127.0.0.1", 0, "")
    # The server has its own loop thread: a client on this thread's own loop talks to it directly.
    return asyncio.run(_what_is_served(started.args[0]))


@pytest.fixture
def controllers(qtbot: Any) -> Iterator[list[ServerController]]:
    made: list[ServerController] = []
    yield made
    for ctl in made:
        ctl.shutdown(timeout=10)


def test_an_engine_built_after_the_edits_serves_what_one_built_before_them(
    qtbot: Any, controllers: list[ServerController]
) -> None:
    eager, lazy = ServerController(project=_base()), ServerController(project=_base())
    controllers += [eager, lazy]
    assert eager.server is not None and eager.engine_built and not lazy.engine_built
    refused = _edit(eager)
    assert _edit(lazy) == refused and len(refused) == 2
    assert not lazy.engine_built, "editing built the engine"
    assert (lazy.is_running, lazy.url, lazy.transports, lazy.sessions()) == (False, "", (), [])
    assert lazy.watching() == {"watched": "interval"} and lazy.instance_failures() == {}
    qtbot.waitUntil(lambda: eager.watching() == lazy.watching(), timeout=WAIT)  # the live data has it too
    expected = _served(qtbot, eager)
    assert expected["reads"]["demo://a"] == ["two edited "] and ("twin", "demo://a") not in expected["resources"]
    assert _served(qtbot, lazy) == expected
    assert lazy.watching() == {"watched": "interval"}


def test_previews_and_completions_answer_before_the_engine_is_built(
    qtbot: Any, controllers: list[ServerController]
) -> None:
    ctl = ServerController(project=_base())
    controllers.append(ctl)
    _edit(ctl)
    outcomes: list[PreviewOutcome] = []
    ctl.preview_finished.connect(outcomes.append)
    with qtbot.waitSignal(ctl.preview_finished, timeout=WAIT):
        ctl.preview("demo://items/beta")
    with qtbot.waitSignal(ctl.preview_finished, timeout=WAIT):
        ctl.preview("demo://nowhere")
    with qtbot.waitSignal(ctl.completions_ready, timeout=WAIT) as completed:
        ctl.complete("1", "item", "id", "al", {})
    found, missing = outcomes
    assert found.resource_name == "item" and found.params == {"id": "beta"}
    assert found.contents is not None and [c.text for c in found.contents] == ["two item beta"]
    assert missing.contents is None and missing.error_code == -32002
    assert "demo://nowhere" in (missing.error_message or "")
    assert completed.args == ["1", ["alpha"]]
    assert not ctl.engine_built


def test_a_start_builds_the_engine_and_edits_racing_it_are_served(
    qtbot: Any, controllers: list[ServerController]
) -> None:
    ctl = ServerController(project=_base())
    controllers.append(ctl)
    ctl.warm_up()
    assert not ctl.engine_built  # warming up starts the workers, not the engine
    late = Project(server=ServerSettings(name="late", workers=1), prelude="WORD = 'new'\n",
                   resources=[_spec("late", uri="demo://late", watch=WatchSpec(interval=5.0))])  # fmt: skip
    with qtbot.waitSignal(ctl.server_started, timeout=WAIT) as started:
        ctl.start_http("127.0.0.1", 0, "")
        # While the control thread builds the engine: whichever comes first, the engine serves the edit.
        ctl.apply_project(late)
    assert ctl.engine_built
    qtbot.waitUntil(lambda: ctl.watching() == {"late": "interval"}, timeout=WAIT)
    served = asyncio.run(_what_is_served(started.args[0]))
    assert served["resources"] == [("late", "demo://late")] and served["reads"]["demo://late"] == ["new late "]


def test_the_bus_is_checked_at_once_and_kept_for_the_engine(qtbot: Any, controllers: list[ServerController]) -> None:
    from resources_qt.bus.urls import default_channel

    ctl = ServerController(project=_base())
    controllers.append(ctl)
    with pytest.raises(ValueError, match="bus"):
        ctl.set_bus("http://not-a-bus.example")
    ctl.set_bus("redis://127.0.0.1:1/0")  # not connected before a start: nothing listens there
    assert not ctl.engine_built
    bus = ctl.server.bus
    assert bus is not None and (bus.url, bus.channel) == ("redis://127.0.0.1:1/0", default_channel("lazy"))
    with qtbot.waitSignal(ctl.bus_state_changed, timeout=WAIT) as cleared:
        ctl.set_bus(None)
    assert cleared.args == [False, ""] and ctl.server.bus is None

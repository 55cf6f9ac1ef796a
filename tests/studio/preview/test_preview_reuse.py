"""PreviewPanel keeps its content views for the next read: nothing of an earlier read shows or lingers."""

from __future__ import annotations

import json

from helpers.preview import Outcome
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

from resources_qt.content import ResourceContent
from studio.preview.content_view import INLINE_LIMIT, ContentView, _get_relay
from studio.preview.preview import SPARE_VIEWS, PreviewPanel


def _panel(qtbot, document) -> PreviewPanel:
    panel = PreviewPanel()
    qtbot.addWidget(panel)
    panel.set_resource(document.spec("notes"))
    return panel


def _show(qtbot, panel: PreviewPanel, *contents: ResourceContent) -> list[ContentView]:
    panel.show_outcome(Outcome(uri=contents[0].uri, contents=list(contents)))
    views = panel.content_views()
    for view in views:
        qtbot.waitUntil(lambda v=view: v.is_ready)
    return views


def test_a_reused_view_shows_only_the_new_read(qtbot, document) -> None:
    panel = _panel(qtbot, document)
    (first,) = _show(qtbot, panel, ResourceContent.from_text("notes://a", "text/markdown", "# Title\n\nbody"))
    assert first.kind == "markdown" and first.toggle_button.isVisibleTo(first)
    (second,) = _show(qtbot, panel, ResourceContent.from_text("notes://b", "text/plain", "plain words"))
    assert second is first  # the same widget, reused
    assert second.kind == "text" and second.shown_text() == "plain words"
    assert not second.toggle_button.isVisibleTo(second)
    assert "notes://b" in second.info_label.text() and "notes://a" not in second.info_label.text()
    assert second.stack.currentWidget() is second.text_view


def test_views_out_of_the_tabs_let_go_of_their_content(qtbot, document) -> None:
    panel = _panel(qtbot, document)
    views = _show(qtbot, panel, *(ResourceContent.from_text(f"notes://{i}", "text/plain", f"text {i}")
                                  for i in range(SPARE_VIEWS + 2)))
    panel.show_outcome(Outcome(uri="notes://gone", contents=None, error_code=-32002, error_message="gone"))
    assert panel.content_views() == []
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the views beyond the spares go
    kept = panel.findChildren(ContentView)
    assert len(kept) == SPARE_VIEWS and all(view in views for view in kept)
    assert all(view.content is None and view.shown_text() == "" for view in kept)


def test_a_large_read_still_being_prepared_never_lands_in_the_view_after_reuse(qtbot, document) -> None:
    panel = _panel(qtbot, document)
    rows = [{"id": i, "name": f"row {i}"} for i in range(INLINE_LIMIT // 8)]
    big = ResourceContent.from_text("notes://big", "application/json", json.dumps(rows))
    # The relay carries every finished render to the GUI thread: once it has carried the big one,
    # the view has had its chance to show it.
    with qtbot.waitSignal(_get_relay().finished, timeout=20_000):
        panel.show_outcome(Outcome(uri="notes://big", contents=[big]))
        (view,) = panel.content_views()
        assert not view.is_ready  # prepared on the render thread
        (small,) = _show(qtbot, panel, ResourceContent.from_text("notes://small", "text/plain", "small"))
        assert small is view
    assert view.shown_text() == "small" and view.content is not None and view.content.uri == "notes://small"


def test_the_first_view_is_made_after_the_first_paint_not_in_the_first_read(qtbot, document) -> None:
    panel = _panel(qtbot, document)
    assert panel.findChildren(ContentView) == []
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: len(panel.findChildren(ContentView)) == 1)
    (made,) = panel.findChildren(ContentView)
    (shown,) = _show(qtbot, panel, ResourceContent.from_text("notes://a", "text/plain", "a"))
    assert shown is made

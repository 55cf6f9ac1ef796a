"""In the window, the notify URI follows the resource address being edited until the user types their own."""

from __future__ import annotations

from PySide6.QtCore import Qt

WAIT_MS = 15_000


def test_the_notify_uri_follows_an_address_edited_in_the_form(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    box = window.server_panel.notify_uri
    qtbot.waitUntil(lambda: box.currentText() == "docs://readme", timeout=WAIT_MS)
    window.catalogue.select("readme")
    window.editor.set_builder_visible(True)
    uri = window.editor.form.uri_edit
    uri.setFocus()
    uri.selectAll()
    qtbot.keyClicks(uri, "docs://introduction")
    qtbot.keyClick(uri, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: box.currentText() == "docs://introduction", timeout=WAIT_MS)
    # Deleting it drops it from the box too.
    window.catalogue.delete_action.trigger()
    qtbot.waitUntil(lambda: box.currentText() not in ("docs://introduction", ""), timeout=WAIT_MS)
    assert box.findText("docs://introduction") < 0

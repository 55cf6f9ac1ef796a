"""PreviewPanel and ContentView: outcomes of every kind rendered from real ResourceContent objects."""

from __future__ import annotations

import json
from dataclasses import replace

from helpers.preview import Outcome
from PySide6.QtCore import QBuffer, QByteArray, Qt
from PySide6.QtGui import QColor, QImage

from resources_qt.content import ResourceContent
from studio.preview.content_view import CHUNK_LINES, DISPLAY_LIMIT, HEX_LIMIT, prepare, pretty_json_prefix
from studio.preview.preview import PreviewPanel


def make(qtbot, document, name: str | None = "notes") -> PreviewPanel:
    panel = PreviewPanel()
    qtbot.addWidget(panel)
    panel.set_resource(document.spec(name) if name else None)
    return panel


def png_bytes(kind: str = "PNG") -> bytes:
    image = QImage(12, 7, QImage.Format.Format_ARGB32)
    image.fill(QColor("blue"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    image.save(buffer, kind)
    return bytes(data)


def show(qtbot, panel, *contents, **fields):
    outcome = Outcome(uri=contents[0].uri if contents else "x://y", contents=list(contents), **fields)
    panel.show_outcome(outcome)
    views = panel.content_views()
    for view in views:
        qtbot.waitUntil(lambda v=view: v.is_ready)
    return views


def test_samples_fill_the_uri_box_and_variables(qtbot, document):
    panel = make(qtbot, document)
    assert panel.uri_box.objectName() == "previewUri"
    assert [panel.uri_box.itemText(i) for i in range(panel.uri_box.count())] == [
        "notes://work/42",
        "notes://home/7",
    ]
    assert panel.uri == "notes://work/42"
    assert panel.variable_edit("folder").text() == "work" and panel.variable_edit("id").text() == "42"
    panel.uri_box.setCurrentIndex(1)
    assert panel.variable_edit("folder").text() == "home"


def test_variable_fields_compose_the_uri(qtbot, document):
    panel = make(qtbot, document)
    folder = panel.variable_edit("folder")
    folder.clear()
    qtbot.keyClicks(folder, "my notes")
    assert panel.uri == "notes://my%20notes/42"
    completer_model = folder.completer().model()
    assert completer_model.stringList() == ["work", "home", "archive"]
    panel.set_completions("folder", ["alpha", "beta"])
    assert completer_model.stringList() == ["alpha", "beta"]


def test_completion_requests_only_for_resources_with_a_completion_snippet(qtbot, document):
    panel = make(qtbot, document)
    requests: list[tuple] = []
    panel.completion_requested.connect(lambda *args: requests.append(args))
    qtbot.keyClicks(panel.variable_edit("id"), "1")
    assert requests == []
    spec = replace(document.spec("notes"), complete="def complete(name, value, context):\n    return []\n")
    panel.set_resource(spec)
    qtbot.keyClicks(panel.variable_edit("id"), "7")
    assert requests[-1] == ("notes", "id", panel.variable_edit("id").text(), {"folder": "work"})


def test_read_button_emits_the_uri(qtbot, document):
    panel = make(qtbot, document)
    assert panel.read_button.objectName() == "previewButton"
    with qtbot.waitSignal(panel.preview_requested) as blocker:
        panel.read_button.click()
    assert blocker.args == ["notes://work/42"]
    assert "Reading" in panel.summary_label.text()


def test_direct_resource_has_no_variable_fields(qtbot, document):
    panel = make(qtbot, document, "config")
    assert panel.uri == "docs://config" and panel.variables.isHidden()
    panel.set_resource(None)
    assert not panel.read_button.isEnabled()


def test_json_outcome_is_pretty_printed_highlighted_with_match_and_time(qtbot, document):
    panel = make(qtbot, document)
    content = ResourceContent.from_text("notes://work/42", "application/json", '{"folder":"work","id":42}')
    (view,) = show(
        qtbot, panel, content, resource_name="notes", is_template=True, template="notes://{folder}/{id}",
        params={"id": "42", "folder": "work"}, elapsed_ms=12.25,
    )  # fmt: skip
    summary = panel.summary_label.text()
    assert "Matched template <b>notes</b>" in summary and "notes://{folder}/{id}" in summary
    # Parameters in the template's order, whatever order they came in; the unit stays with its number.
    assert "folder</code>&nbsp;=&nbsp;<code>work" in summary and "12.2&nbsp;ms" in summary
    assert summary.index("folder</code>") < summary.index("id</code>")
    assert panel.output.objectName() == "previewOutput"
    assert view.kind == "text"
    assert view.shown_text() == json.dumps({"folder": "work", "id": 42}, indent=2)
    block = view.text_view.document().findBlockByNumber(1)
    assert block.layout().formats(), "JSON keys are highlighted"


def test_markdown_outcome_renders_with_a_source_toggle(qtbot, document):
    panel = make(qtbot, document, "readme")
    (view,) = show(
        qtbot, panel, ResourceContent.from_text("docs://readme", "text/markdown", "# Title\n\n*hi*\n")
    )
    assert view.kind == "markdown"
    assert view.stack.currentWidget() is view.page("markdown")
    assert view.page("markdown").toPlainText().startswith("Title")
    view.toggle_button.click()
    assert view.stack.currentWidget() is view.text_view
    assert view.shown_text() == "# Title\n\n*hi*\n"


def test_csv_outcome_is_a_table_over_a_model(qtbot, document):
    panel = make(qtbot, document, "config")
    (view,) = show(
        qtbot, panel, ResourceContent.from_text("docs://t", "text/csv", 'name,age\nalice,30\n"b, c",25\n')
    )
    assert view.kind == "csv" and view.stack.currentWidget() is view.page("csv")
    model = view.page("csv").model()
    assert model.rowCount() == 2 and model.columnCount() == 2
    assert model.headerData(0, Qt.Orientation.Horizontal) == "name"
    assert model.index(1, 0).data() == "b, c"


def test_image_blob_is_rendered(qtbot, document):
    panel = make(qtbot, document, "config")
    (view,) = show(qtbot, panel, ResourceContent.from_bytes("docs://i.png", "image/png", png_bytes()))
    assert view.kind == "image" and not view.toggle_button.isVisibleTo(view)
    pixmap = view.page("image").label.pixmap()
    assert (pixmap.width(), pixmap.height()) == (12, 7)


def test_svg_text_is_rendered_and_its_source_highlighted(qtbot, document):
    panel = make(qtbot, document, "config")
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><rect width="20" height="10"/></svg>'
    )
    (view,) = show(qtbot, panel, ResourceContent.from_text("docs://i.svg", "image/svg+xml", svg))
    assert view.kind == "svg" and view.page("svg").label.pixmap().width() == 20
    view.toggle_button.click()
    assert view.shown_text() == svg


def test_other_blobs_show_a_hex_dump_with_the_size(qtbot, document):
    panel = make(qtbot, document, "config")
    data = bytes(range(256)) * 200  # 51,200 bytes
    (view,) = show(qtbot, panel, ResourceContent.from_bytes("docs://bin", "application/octet-stream", data))
    assert view.kind == "hex"
    lines = view.shown_text().splitlines()
    assert lines[0].startswith("00000000  00 01 02 03") and lines[0].endswith("|................|")
    assert len(lines) == HEX_LIMIT // 16
    assert "50.0 KB" in view.note_label.text() and "first 16.0 KB" in view.note_label.text()


def test_error_outcome_shows_code_message_and_data(qtbot, document):
    panel = make(qtbot, document)
    panel.show_outcome(
        Outcome(uri="notes://x", error_code=-32002, error_message="Resource not found: notes://x",
                error_data={"uri": "notes://x"}, contents=None)
    )  # fmt: skip
    assert panel.pages.currentWidget() is panel.error_view
    text = panel.error_view.toPlainText()
    assert "Resource not found (-32002)" in text and "notes://x" in text and '"uri"' in text
    assert "No resource matched" in panel.summary_label.text()


def test_several_contents_get_one_tab_each(qtbot, document):
    panel = make(qtbot, document, "config")
    views = show(
        qtbot, panel,
        ResourceContent.from_text("docs://a", "text/plain", "A"),
        ResourceContent.from_text("docs://b", "text/x-python", "def f():\n    pass\n"),
    )  # fmt: skip
    assert [v.shown_text() for v in views] == ["A", "def f():\n    pass\n"]
    assert panel.content_tabs.count() == 2


def test_save_content_writes_all_bytes(qtbot, document, tmp_path):
    panel = make(qtbot, document, "config")
    data = bytes(range(256)) * 400
    (view,) = show(qtbot, panel, ResourceContent.from_bytes("docs://bin", "application/octet-stream", data))
    view.save_to(tmp_path / "out.bin")
    assert (tmp_path / "out.bin").read_bytes() == data


def test_ten_megabytes_of_json_render_off_the_gui_thread(qtbot, document):
    panel = make(qtbot, document, "config")
    items = [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "score": i / 7} for i in range(130_000)]
    text = json.dumps(items)
    assert len(text) > 10_000_000
    panel.show_outcome(
        Outcome(
            uri="docs://big", contents=[ResourceContent.from_text("docs://big", "application/json", text)]
        )
    )
    (view,) = panel.content_views()
    # show_outcome returned before the work was done: the view says it is preparing.
    assert not view.is_ready and view.stack.currentWidget() is view.loading_label
    qtbot.waitUntil(lambda: view.is_ready, timeout=60_000)
    assert view.kind == "text"
    assert len(view.shown_text()) == DISPLAY_LIMIT
    assert view.shown_text().startswith('[\n  {\n    "id": 0,')
    assert "Showing the first 256.0 KB" in view.note_label.text()


def test_text_is_highlighted_by_mime_type(qtbot, document):
    panel = make(qtbot, document, "config")
    samples = {
        "application/yaml": "key: value\nlist:\n  - 1\n",
        "application/xml": '<root a="1">\n  <child/>\n</root>\n',
        "text/html": "<p class='x'>hi</p>\n",
        "text/x-python": "def f():\n    return 1\n",
        "application/ld+json": '{"@id": 1}',
    }
    for mime, text in samples.items():
        (view,) = show(qtbot, panel, ResourceContent.from_text("docs://x", mime, text))
        doc = view.text_view.document()
        blocks = [doc.findBlockByNumber(n) for n in range(doc.blockCount())]
        assert any(block.layout().formats() for block in blocks), f"{mime} is highlighted"
    (view,) = show(qtbot, panel, ResourceContent.from_text("docs://x", "text/plain", "just words"))
    assert not view.text_view.document().firstBlock().layout().formats()


def test_image_info_names_the_pixel_size(qtbot, document):
    panel = make(qtbot, document, "config")
    (view,) = show(qtbot, panel, ResourceContent.from_bytes("docs://i.png", "image/png", png_bytes()))
    assert "12 \u00d7 7 px" in view.info_label.text() and "image/png" in view.info_label.text()


def test_long_text_fills_the_view_piece_by_piece_highlighted_once(qtbot, document):
    panel = make(qtbot, document, "config")
    numbers = list(range(6000))
    text = json.dumps(numbers)  # small enough to prepare inline, 6002 lines once pretty-printed
    panel.show_outcome(Outcome(uri="docs://n", contents=[ResourceContent.from_text("docs://n", "application/json",
                                                                                   text)]))  # fmt: skip
    (view,) = panel.content_views()
    # The first piece is shown at once; the rest follows on later turns of the event loop.
    assert view.kind == "text" and not view.is_ready
    assert 1 < view.text_view.blockCount() <= CHUNK_LINES
    with qtbot.waitSignal(view.rendered, timeout=10_000):
        pass
    assert view.is_ready and view.shown_text() == json.dumps(numbers, indent=2)
    document_ = view.text_view.document()
    last_number = document_.findBlockByNumber(6000)
    assert last_number.text().strip() == "5999"
    assert last_number.layout().formats(), "lines inserted later are highlighted too"


def test_large_json_is_pretty_printed_as_far_as_it_is_shown():
    value = {"a": [1, 2.5e3, {"b": None, "c": [], "d": {}}], "e": 'x"y\\u00e9', "f": [True, False]}
    text = json.dumps(value)
    assert pretty_json_prefix(text, 10_000) == (json.dumps(value, indent=2), True)
    pretty, complete = pretty_json_prefix(json.dumps(list(range(100_000))), 1000)
    assert not complete and 1000 <= len(pretty) < 1100 and pretty.startswith("[\n  0,\n  1,")
    assert pretty_json_prefix("[1, 2, nope]", 1000) is None
    # Large JSON is checked as far as it is formatted: a mistake there is reported, as received.
    prepared = prepare(
        ResourceContent.from_text("x://y", "application/json", "[1, oops, " + "1," * 600_000 + "1]")
    )
    assert "Not valid JSON" in " ".join(prepared.notes) and prepared.text.startswith("[1, oops, 1,1,")


def test_a_long_error_scrolls_instead_of_being_cut_off(qtbot, document):
    panel = make(qtbot, document)
    panel.resize(600, 300)
    panel.show()
    data = {"lines": [f"detail line {n}" for n in range(200)]}
    panel.show_outcome(Outcome(uri="notes://x", error_code=-32000, error_message="Reader failed: " + "long " * 300,
                               error_data=data, contents=None))  # fmt: skip
    view = panel.error_view
    assert "detail line 199" in view.toPlainText()
    bar = view.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(bar.maximum())  # the end of the data can be scrolled into view
    assert bar.value() == bar.maximum()

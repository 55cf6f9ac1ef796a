"""The snippet editor's live warnings in the window: pyflakes in the analysis process, underlined, said on hover."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip

from studio.code.snippet_editor import SnippetEditor
from studio.code.snippet_pane import SnippetPane

WAIT_MS = 60_000  # the analysis process loads jedi before its first answer: seconds on a busy machine


def _open(make_window, qtbot, project_file: Path):
    window = make_window()
    assert window.open_project(project_file)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.catalogue.select("readme")
    qtbot.waitUntil(lambda: window.editor.snippet_editor.toPlainText().startswith("def read"), timeout=WAIT_MS)
    return window


def _replace(editor: SnippetEditor, source: str) -> None:
    """The whole text replaced as a paste would: an edit, checked after the pause like typing."""
    editor.setFocus()
    editor.selectAll()
    editor.insertPlainText(source)


def _messages(editor: SnippetEditor) -> list[tuple[int, str]]:
    return [(w.line, w.message) for w in editor.warnings]


def _waves(editor: SnippetEditor) -> list[tuple[int, str, str]]:
    """(line, underlined text, colour) of every wavy underline drawn."""
    return [
        (s.cursor.blockNumber() + 1, s.cursor.selectedText(), s.format.underlineColor().name())
        for s in editor.extraSelections()
        if s.format.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    ]


def _hover(editor: SnippetEditor, line: int) -> str:
    rect = editor.cursorRect(QTextCursor(editor.document().findBlockByNumber(line - 1)))
    pos = editor.viewport().pos() + rect.center() + QPoint(4, 0)
    QApplication.sendEvent(editor, QHelpEvent(QEvent.Type.ToolTip, pos, editor.mapToGlobal(pos)))
    said = QToolTip.text()
    QToolTip.hideText()
    return said


def _settled(pane: SnippetPane) -> bool:
    return not pane.editor.has_pending_edit and not pane.warnings_pending and not pane.check_pending


def test_typing_an_unused_import_underlines_it_as_a_warning_said_on_hover(make_window, qtbot, project_file) -> None:
    window = _open(make_window, qtbot, project_file)
    editor = window.editor.snippet_editor
    editor.setFocus()
    editor.moveCursor(QTextCursor.MoveOperation.Start)
    qtbot.keyClicks(editor, "import os")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _messages(editor) == [(1, "'os' imported but unused")], timeout=WAIT_MS)
    assert editor.diagnostic is None
    warning = editor.warning_colour.name()
    assert warning != editor.theme.error.name()  # a warning, not the error's colour
    assert (1, "os", warning) in _waves(editor)
    assert _hover(editor, 1) == "'os' imported but unused"
    assert editor.hover_text(2) == ""  # `def read` is fine


def test_an_undefined_name_is_flagged_on_its_line(make_window, qtbot, project_file) -> None:
    window = _open(make_window, qtbot, project_file)
    editor = window.editor.snippet_editor
    _replace(editor, "def read(uri, params):\n    return undefined_thing\n")
    qtbot.waitUntil(lambda: _messages(editor) == [(2, "undefined name 'undefined_thing'")], timeout=WAIT_MS)
    assert (2, "undefined_thing", editor.warning_colour.name()) in _waves(editor)
    assert _hover(editor, 2) == "undefined name 'undefined_thing'"


def test_the_helpers_and_the_preludes_names_are_known_to_a_reader(make_window, qtbot, project_file) -> None:
    window = _open(make_window, qtbot, project_file)
    editor = window.editor.snippet_editor
    assert window.document.project.prelude == "GREETING = 'hello'\n"
    _replace(editor, (
        "import os\n"  # the one warning: it says the warnings of this text have come
        "def read(uri, params):\n"
        "    if params.get('id') == 'gone':\n"
        "        raise NotFound(f'no {uri}')\n"
        "    if params.get('raw'):\n"
        "        return blob(b'x', 'application/octet-stream')\n"
        "    return text(f'{GREETING} from {current_uri()} in {PROJECT_DIR}', 'text/plain')\n"
    ))  # fmt: skip
    qtbot.waitUntil(lambda: _messages(editor) == [(1, "'os' imported but unused")], timeout=WAIT_MS)


def test_a_name_the_prelude_comes_to_define_is_no_longer_undefined(make_window, qtbot, project_file) -> None:
    window = _open(make_window, qtbot, project_file)
    editor = window.editor.snippet_editor
    _replace(editor, "def read(uri, params):\n    return text(json.dumps(LIMIT))\n")
    qtbot.waitUntil(lambda: _messages(editor) == [(2, "undefined name 'json'"), (2, "undefined name 'LIMIT'")],
                    timeout=WAIT_MS)  # fmt: skip
    prelude_pane = window.editor.prelude_pane
    prelude = prelude_pane.editor
    _replace(prelude, "import json\nLIMIT = 3\n")
    prelude.flush()
    qtbot.waitUntil(lambda: window.document.project.prelude == "import json\nLIMIT = 3\n", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not editor.warnings and _settled(window.editor.reader_pane), timeout=WAIT_MS)
    # In the prelude itself `import json` is not unused: the readers use it. Its own slip still shows.
    _replace(prelude, "import json\nLIMIT = 3\nTOP = LIMT\n")
    qtbot.waitUntil(lambda: _messages(prelude) == [(3, "undefined name 'LIMT'")], timeout=WAIT_MS)


def test_a_syntax_error_shows_only_the_compile_error(make_window, qtbot, project_file) -> None:
    window = _open(make_window, qtbot, project_file)
    pane = window.editor.reader_pane
    editor = pane.editor
    _replace(editor, "import os\ndef read(uri, params):\n    return undefined_thing\n")
    qtbot.waitUntil(lambda: len(editor.warnings) == 2, timeout=WAIT_MS)
    _replace(editor, "import os\ndef read(uri, params):\n    return (undefined_thing\n")
    qtbot.waitUntil(lambda: editor.diagnostic is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: _settled(pane), timeout=WAIT_MS)
    assert editor.warnings == ()
    colours = {colour for _line, _text, colour in _waves(editor)}
    assert colours == {editor.theme.error.name()}  # one wave, the error's
    assert editor.hover_text(1) == ""
    assert "never closed" in _hover(editor, 3)

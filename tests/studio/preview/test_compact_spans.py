"""CompactSpans hold the same runs as the per-line lists, in arrays the garbage collector never walks."""

from __future__ import annotations

import gc
import json

from PySide6.QtWidgets import QPlainTextEdit
from pytestqt.qtbot import QtBot

from studio.look.highlighter import lex_spans, lexer_for_mime
from studio.preview.renderers.spans import CompactSpanHighlighter, CompactSpans

TEXTS = {
    "application/json": json.dumps({"a": [1, 2.5, None, True], "b": {"c": "d\u00e9"}}, indent=2),
    "text/x-python": "def read(uri, params):\n    return {'x': 1}  # comment\n\n\nclass A:\n    pass",
    "text/markdown": "# Title\n\nSome *emphasis* and `code`.\n\n- item\n",
    "text/plain": "just words\nno colour",
}


def test_runs_are_the_same_as_the_per_line_lists_for_every_lexer() -> None:
    for mime, text in TEXTS.items():
        lexer = lexer_for_mime(mime)
        expected = lex_spans(text, lexer)
        compact = CompactSpans.lex(text, lexer)
        assert compact.line_count == text.count("\n") + 1, mime
        for line in range(compact.line_count):
            assert compact.line_runs(line) == expected.get(line, []), (mime, line)
        assert compact.line_runs(compact.line_count) == [] and compact.line_runs(-1) == []
        assert compact.run_count == sum(len(runs) for runs in expected.values())


def test_a_quarter_megabyte_of_json_adds_no_objects_for_the_collector() -> None:
    text = json.dumps([{"id": i, "name": f"row {i}", "ok": True} for i in range(8000)], indent=2)
    assert len(text) > 250_000
    gc.collect()
    before = len(gc.get_objects())
    spans = CompactSpans.lex(text, lexer_for_mime("application/json"))
    gc.collect()
    added = len(gc.get_objects()) - before
    assert spans.run_count > 50_000
    assert added < 10  # per-line lists of tuples would add about 70,000


def test_the_highlighter_colours_astral_text_at_its_utf16_columns(qtbot: QtBot) -> None:
    view = QPlainTextEdit()
    qtbot.addWidget(view)
    highlighter = CompactSpanHighlighter(view.document())
    text = '{"\U0001f600": 12}'
    highlighter.use_spans(CompactSpans.lex(text, lexer_for_mime("application/json")))
    view.setPlainText(text)
    # Code points: the key "😀" is columns 1-3 and 12 is 6-7; in UTF-16 the emoji takes two units.
    runs = {(f.start, f.length): f.format.foreground().color() for f in view.document().firstBlock().layout().formats()}
    assert (1, 4) in runs and (7, 2) in runs
    assert runs[(1, 4)] != runs[(7, 2)]

"""Editor colours: a dark pygments style under a dark palette, re-themed live, and WCAG AA text on rendered pixels."""

from __future__ import annotations

from helpers.contrast import contrast, dark_palette, grab, text_contrast
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QPalette, QTextCursor

from studio.code.snippet_editor import SnippetEditor
from studio.look.editor_theme import DARK_STYLE, LIGHT_STYLE

# One kind of token per line, so each line's text has one colour to measure.
LINES = [
    "import json",
    "# a comment line",
    "'a string literal'",
    "12345 + 0.5",
    "def read(uri, params):",
    "    return text(params)",
    "    raise ValueError",
]


def keyword_color(editor: SnippetEditor) -> str:
    layout = editor.document().findBlockByNumber(0).layout()
    return next(r.format.foreground().color().name() for r in layout.formats() if r.start == 0)


def shown_editor(qtbot, palette: QPalette | None = None) -> SnippetEditor:
    editor = SnippetEditor()
    qtbot.addWidget(editor)
    if palette is not None:
        editor.setPalette(palette)
    editor.set_source("\n".join(LINES) + "\n")
    editor.resize(520, 260)
    editor.show()
    qtbot.waitExposed(editor)
    return editor


def line_rect(editor: SnippetEditor, number: int) -> QRect:
    block = editor.document().findBlockByNumber(number)
    rect = editor.blockBoundingGeometry(block).translated(editor.contentOffset()).toRect()
    return QRect(0, rect.top(), editor.viewport().width(), rect.height())


def test_dark_palette_picks_a_dark_style_and_every_line_reaches_aa_contrast(qtbot):
    editor = shown_editor(qtbot, dark_palette())
    assert editor.theme.style == DARK_STYLE and editor.highlighter.theme.style == DARK_STYLE
    current = 1  # the comment line: the dimmest token on the current-line background
    editor.setTextCursor(QTextCursor(editor.document().findBlockByNumber(current)))
    image = grab(editor.viewport())
    base = dark_palette().color(QPalette.ColorRole.Base)
    for number, line in enumerate(LINES):
        ratio, _text, background = text_contrast(image, line_rect(editor, number))
        assert ratio >= 4.5, f"line {number + 1} {line!r}: contrast {ratio:.2f}"
        if number == current:
            assert background != base  # the current line is marked
        else:
            assert background == base


def test_gutter_numbers_and_error_underline_are_readable_in_the_dark(qtbot):
    editor = shown_editor(qtbot, dark_palette())
    editor.set_diagnostic(2, 1, "boom")
    theme = editor.theme
    assert contrast(theme.gutter_current, theme.gutter_background) >= 4.5
    assert contrast(theme.gutter_text, theme.gutter_background) >= 3.0
    assert contrast(theme.error, theme.base) >= 4.5
    gutter = editor.viewport().mapTo(editor, editor.viewport().rect().topLeft()).x()
    image = grab(editor)
    ratio, _text, background = text_contrast(image, QRect(0, line_rect(editor, 0).top() + editor.viewport().y(),
                                                           gutter, line_rect(editor, 0).height()))
    assert ratio >= 3.0 and background == theme.gutter_background


def test_palette_change_re_themes_the_highlighter(qtbot):
    editor = shown_editor(qtbot)
    assert editor.theme.style == LIGHT_STYLE
    light = keyword_color(editor)
    editor.setPalette(dark_palette())
    assert editor.theme.style == DARK_STYLE
    dark = keyword_color(editor)
    assert dark != light
    base = dark_palette().color(QPalette.ColorRole.Base)
    assert contrast(editor.document().findBlockByNumber(0).layout().formats()[0].format.foreground().color(),
                    base) >= 4.5
    editor.setPalette(QPalette())
    assert keyword_color(editor) == light


def test_a_span_highlighter_on_a_plain_text_view_follows_its_palette(qtbot):
    from PySide6.QtWidgets import QPlainTextEdit

    from studio.look.highlighter import SpanHighlighter, lex_spans, lexer_for_mime

    view = QPlainTextEdit()
    qtbot.addWidget(view)
    text = '{"key": 1}'
    highlighter = SpanHighlighter(view.document(), lex_spans(text, lexer_for_mime("application/json")))
    view.setPlainText(text)
    assert highlighter.theme.style == LIGHT_STYLE
    view.setPalette(dark_palette())
    assert highlighter.theme.style == DARK_STYLE
    colors = {r.format.foreground().color().name() for r in view.document().firstBlock().layout().formats()}
    base = dark_palette().color(QPalette.ColorRole.Base)
    assert colors and all(contrast(QColor(c), base) >= 4.5 for c in colors)

"""Completion in the snippet editor: jedi names with the prelude and helpers, params keys, and the popup."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from studio.analysis.completion_source import (
    CompletionRequest,
    compute_completions,
    is_completion_point,
    params_key_prefix,
)
from studio.analysis.worker import CompletionWorker
from studio.code.snippet_pane import SnippetPane

WAIT_MS = 30_000  # the worker's first jedi call loads its stubs
PRELUDE = "CUSTOMERS = {'42': 'Ada'}\n\ndef customer_name(key):\n    return CUSTOMERS[key]\n"


def names_at(source: str, *, prelude: str = "", variables: tuple[str, ...] = ()) -> list[str]:
    lines = source.split("\n")
    request = CompletionRequest(request_id=1, owner=0, source=source, line=len(lines), column=len(lines[-1]),
                                prelude=prelude, variables=variables)
    return [c.name for c in compute_completions(request)]


def test_completions_see_the_prelude_the_helpers_and_modules():
    assert names_at("def read(uri, params):\n    return CUS", prelude=PRELUDE)[0] == "CUSTOMERS"
    assert "customer_name" in names_at("def read(uri, params):\n    return cust", prelude=PRELUDE)
    assert names_at("def read(uri, params):\n    return ResourceCon") == ["ResourceContent"]
    helpers = names_at("def read(uri, params):\n    return bl") + names_at("def read(uri, params):\n    return te")
    assert "blob" in helpers and "text" in helpers
    assert {"dump", "dumps"} <= set(names_at("import json\njson.du"))
    assert "uri" in names_at("def read(uri, params):\n    return ur")


def test_params_keys_complete_the_template_variables():
    found = compute_completions(CompletionRequest(request_id=1, owner=0, source="x = params['fo", line=1, column=14,
                                                  variables=("folder", "id", "format")))
    assert [(c.name, c.suffix) for c in found] == [("folder", "']"), ("format", "']")]
    source = 'x = params.get("")'
    found = compute_completions(CompletionRequest(request_id=1, owner=0, source=source, line=1, column=16,
                                                  variables=("id",)))
    assert [(c.name, c.suffix) for c in found] == [("id", "")]  # the closing quote is already there
    assert params_key_prefix('params["i') == ("i", '"', "]")
    assert params_key_prefix("params[i") is None


def test_when_typing_triggers_completion():
    assert is_completion_point("    return te", typed="e")
    assert not is_completion_point("    return t", typed="t")  # one letter is not enough
    assert is_completion_point("json.", typed=".")
    assert is_completion_point('params["', typed='"')
    assert not is_completion_point("# a comment wo", typed="o")
    assert not is_completion_point("x = 'in a stri", typed="i")
    assert not is_completion_point("x = (", typed="(")


def make_pane(qtbot, source: str) -> SnippetPane:
    pane = SnippetPane(heading="Reader", placeholder="", function="read", required=True, object_name="snippetEditor")
    qtbot.addWidget(pane)
    pane.load(source, key="r")
    pane.resize(600, 400)
    pane.show()
    qtbot.waitExposed(pane)
    pane.editor.setFocus()
    pane.editor.moveCursor(QTextCursor.MoveOperation.End)
    return pane


def test_typing_opens_the_popup_and_enter_inserts_the_choice(qtbot):
    pane = make_pane(qtbot, "def read(uri, params):\n    return ")
    pane.set_completion_context(prelude=PRELUDE, variables=[])
    completion = pane.editor.completion
    with qtbot.waitSignal(completion.shown, timeout=WAIT_MS) as shown:
        qtbot.keyClicks(pane.editor, "CUS")
    assert shown.args[0][0] == "CUSTOMERS" and completion.popup_visible
    assert completion.completer.currentCompletion() == "CUSTOMERS"
    qtbot.keyClick(completion.completer.popup(), Qt.Key.Key_Return)
    assert pane.editor.toPlainText().endswith("    return CUSTOMERS")
    assert not completion.popup_visible


def test_params_bracket_offers_the_template_variables(qtbot):
    pane = make_pane(qtbot, "def read(uri, params):\n    return ")
    pane.set_completion_context(prelude="", variables=["folder", "id"])
    completion = pane.editor.completion
    with qtbot.waitSignal(completion.shown, timeout=WAIT_MS) as shown:
        qtbot.keyClicks(pane.editor, 'params["')
    assert shown.args[0] == ["folder", "id"]
    qtbot.keyClick(pane.editor, Qt.Key.Key_I)  # narrows the open popup
    assert completion.completer.currentCompletion() == "id"
    qtbot.keyClick(completion.completer.popup(), Qt.Key.Key_Return)
    assert pane.editor.toPlainText().endswith('    return params["id"]')


def test_ctrl_space_asks_at_once_and_escape_closes_the_popup(qtbot):
    pane = make_pane(qtbot, "import json\njson.")
    completion = pane.editor.completion
    with qtbot.waitSignal(completion.shown, timeout=WAIT_MS) as shown:
        qtbot.keyClick(pane.editor, Qt.Key.Key_Space, Qt.KeyboardModifier.ControlModifier)
    assert "dumps" in shown.args[0]
    qtbot.keyClick(completion.completer.popup(), Qt.Key.Key_Escape)
    assert not completion.popup_visible
    assert pane.editor.toPlainText() == "import json\njson."


def test_an_answer_for_a_cursor_that_moved_away_is_dropped(qtbot):
    pane = make_pane(qtbot, "import json\njson.")
    completion = pane.editor.completion
    with qtbot.waitSignal(completion.shown, timeout=WAIT_MS):
        completion.request_now()  # connects the editor to the worker first: it hears answers before the test
    completion.hide_popup()
    with qtbot.waitSignal(CompletionWorker.shared().completed, timeout=WAIT_MS):
        completion.request_now()
        # Before the answer can arrive (it is queued to this thread), the user goes elsewhere.
        pane.editor.moveCursor(QTextCursor.MoveOperation.Start)
    assert not completion.popup_visible


def test_a_completion_process_that_died_is_started_again(qtbot):
    pane = make_pane(qtbot, "import json\njson.")
    completion = pane.editor.completion
    with qtbot.waitSignal(completion.shown, timeout=WAIT_MS):
        completion.request_now()
    completion.hide_popup()
    worker = CompletionWorker.shared()
    process = worker._process
    assert process is not None and process.poll() is None
    process.kill()  # the process this test's worker started, as a crash would end it
    process.wait()
    with qtbot.waitSignal(completion.shown, timeout=WAIT_MS) as shown:
        completion.request_now()
    assert "dumps" in shown.args[0]
    assert worker._process is not process and worker._process.poll() is None


def test_closing_a_worker_ends_its_process(qtbot):
    worker = CompletionWorker()
    request = CompletionRequest(request_id=1, owner=999, source="import json\njson.", line=2, column=5)
    with qtbot.waitSignal(worker.completed, timeout=WAIT_MS) as answered:
        worker.submit(request)
    assert "dumps" in [c.name for c in answered.args[1]]
    process = worker._process
    worker.close()
    assert process is not None and process.poll() is not None

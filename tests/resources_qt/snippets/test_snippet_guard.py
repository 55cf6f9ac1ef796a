"""ModuleGuard: what a snippet changes in a guarded module or class is put back after the call."""

from __future__ import annotations

import json

from resources_qt.snippets.guard import ModuleGuard


def test_restore_puts_back_replaced_deleted_and_added_names() -> None:
    original_dumps, original_loads = json.dumps, json.loads
    original_default = json.JSONEncoder.default
    guard = ModuleGuard.snapshot()
    assert guard.restore() == 0
    try:
        json.dumps = lambda *a, **k: "hijacked"
        del json.loads
        json.JSONEncoder.default = lambda self, o: "x"  # type: ignore[method-assign]
        json.JSONEncoder.extra = "shadow"  # type: ignore[attr-defined]
        assert guard.restore() == 4
        assert json.dumps is original_dumps and json.loads is original_loads
        assert json.JSONEncoder.default is original_default
        assert not hasattr(json.JSONEncoder, "extra")
        assert guard.restore() == 0
    finally:
        json.dumps, json.loads, json.JSONEncoder.default = original_dumps, original_loads, original_default

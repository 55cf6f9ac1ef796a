"""The bundled example opened as untitled still finds its recorded snapshots: its tests pass in the studio."""

from __future__ import annotations

from studio.shell.project_files import bundled_example


def test_the_bundled_examples_tests_pass_on_the_tests_page(make_window, qtbot):
    example = bundled_example()
    assert example is not None
    window = make_window()
    assert window.open_example(example)
    assert window.document.path is None and window.document.origin == example
    tests = window.tests_view
    with qtbot.waitSignal(tests.run_finished, timeout=60_000) as finished:
        assert tests.run_all()
    passed, failed = finished.args
    assert failed == 0 and passed > 0

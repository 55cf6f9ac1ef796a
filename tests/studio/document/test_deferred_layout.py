"""A project opened in the window keeps its file's layout for the first save, though the layout is built then."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

_FILE = """format = 1

[server]
name = "styled"  # keep this comment

# The first resource, introduced by a comment
[[resources]]
name = "first"
uri = "demo://first"
mime_type = "text/plain"
reader = '''
def read(uri, params):
    return "first"
'''

[[resources]]
name = "second"  # and this one
uri = "demo://second"
mime_type = "text/plain"
reader = '''
def read(uri, params):
    return "second"
'''
"""


def test_the_first_save_after_opening_rewrites_only_what_changed(make_window, tmp_path: Path) -> None:
    path = tmp_path / "styled.toml"
    path.write_text(_FILE, encoding="utf-8")
    window = make_window()
    window.open_project(path)
    second = window.document.spec("second")
    assert second is not None
    # An edit before anything asked for the layout: the save compares with the file as it was read.
    window.document.update_resource("second", replace(second, title="Second"))
    assert window.save()
    saved = path.read_text(encoding="utf-8")
    expected = _FILE.replace('name = "second"  # and this one\n', 'name = "second"  # and this one\ntitle = "Second"\n')
    assert saved == expected
    assert not window.document.is_dirty

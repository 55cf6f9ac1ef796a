"""Values for a `[server]` table row that tests can set: one other than its default, one outside its range."""

from __future__ import annotations

from resources_qt.project.settings_table import Setting


def other_value(row: Setting) -> str | bool | int | float:
    """A valid value that is not the row's default (so seeing it proves it travelled)."""
    if row.kind is bool:
        return not row.default
    if row.kind is str:
        if row.choices:
            return next(choice for choice in row.choices if choice != row.default)
        return f"{row.default}-changed"
    assert row.least is not None and row.most is not None
    pick = row.least if row.default == row.most or row.default is None else row.most
    if row.default == row.least:
        pick = row.most
    return float(pick) if row.kind is float else int(pick)


def out_of_range(row: Setting) -> int | float:
    """A value just past the row's upper bound."""
    assert row.most is not None
    return float(row.most) * 2 + 1 if row.kind is float else int(row.most) * 2 + 1

"""Editing one table of a project file in place with tomlkit, keeping its comments and style.

Its own module so that tomlkit (15-20 ms to import) loads at the first save that edits a changed
table, not with the project package: opening a project never needs it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tomlkit
from tomlkit import items
from tomlkit.container import Container

from resources_qt.errors import ValidationError
from resources_qt.project import render

__all__ = ["apply_entries", "edit_text", "entry_of", "table_of"]

logger = logging.getLogger(__name__)


def edit_text(
    old: str, edit: Callable[[tomlkit.TOMLDocument], None], check: Callable[[str], bool], *, what: str
) -> str | None:
    """`old` edited in place, or None (standard layout then) when the edit would not load back as the model."""
    try:
        doc = tomlkit.parse(old)
        edit(doc)
        text = doc.as_string()
    except ValidationError:
        raise  # a string TOML cannot carry: nothing can be saved
    except Exception:  # a tomlkit quirk must never cost the save; the standard layout is always right
        logger.warning("Rewrote %s in the standard layout: editing it in place failed", what, exc_info=True)
        return None
    try:
        same = check(text)
    except (ValueError, KeyError, IndexError, TypeError):  # the edit broke the table's shape
        same = False
    if same:
        return text
    logger.warning("Rewrote %s in the standard layout: the edited text did not load back the same", what)
    return None


def table_of(item: Any) -> items.Table | items.InlineTable:
    if not isinstance(item, items.Table | items.InlineTable):
        raise TypeError(f"expected a table, found {type(item).__name__}")
    return item


def entry_of(doc: tomlkit.TOMLDocument, kind: str) -> items.Table:
    array = doc[kind]
    if not isinstance(array, items.AoT) or len(array) != 1:
        raise TypeError(f"expected one [[{kind}]] entry")
    return array[0]


def apply_entries(
    table: items.Table | items.InlineTable | tomlkit.TOMLDocument,
    entries: Mapping[str, Any],
    *,
    full: Mapping[str, Any],
    order: Sequence[str],
    same: Callable[[str, Any, Any], bool] = lambda _name, old, new: bool(old == new),
) -> None:
    """Make `table` hold `entries`: equal values untouched, changed ones replaced in place, others removed."""
    for name in list(table.keys()):
        current = table[name]
        if same(name, render.plain(current.unwrap() if isinstance(current, items.Item) else current), full.get(name)):
            continue
        if name not in entries:
            del table[name]
            continue
        wanted = entries[name]
        if isinstance(wanted, Mapping) and isinstance(current, items.Table | items.InlineTable):
            apply_entries(current, wanted, full=wanted, order=list(wanted))
        elif isinstance(current, items.AoT | items.Table):
            del table[name]
        else:
            table[name] = _item(name, wanted, like=current)
    known = [name for name in order if name in entries] + [name for name in entries if name not in order]
    container = _container(table)
    for position, name in enumerate(known):
        if name in table:
            continue
        item = _item(name, entries[name], like=None)
        # Beside the plain keys: a key below a sub-table's header would belong to the sub-table.
        plain_keys = {key for key in table if not isinstance(table[key], items.Table | items.AoT)}
        before = next((k for k in reversed(known[:position]) if k in plain_keys), None)
        after = next((k for k in known[position + 1 :] if k in plain_keys), None)
        first_sub = next((k for k in table if k not in plain_keys), None)
        if before is not None:
            _insert_after(container, before, name, item)
        elif after is not None:
            container._insert_at(_body_index(container, after), name, item)
        elif first_sub is not None:
            container._insert_at(_body_index(container, first_sub), name, item)
        else:
            table.add(name, item)


def _container(table: items.Table | items.InlineTable | tomlkit.TOMLDocument) -> Container:
    return table if isinstance(table, Container) else table.value


def _insert_after(container: Container, before: str, name: str, item: items.Item) -> None:
    """`name` on the line after `before`; tomlkit 0.15.3 dropped its own `_insert_after`."""
    index = _body_index(container, before) + 1
    if index < len(container.body):
        container._insert_at(index, name, item)
    else:
        container.append(name, item)


def _body_index(container: Container, name: str) -> int:
    for index, (key, _value) in enumerate(container.body):
        if key is not None and key.key == name:
            return index
    raise KeyError(name)


def _item(name: str, wanted: Any, *, like: Any) -> items.Item:
    """The new value as a tomlkit item, in the style of the value it replaces where that can hold it."""
    text = render.render_key(name, wanted)
    if isinstance(wanted, str) and isinstance(like, items.String) and name not in render.BLOCK_KEYS:
        one_line = "\n" not in wanted and "\r" not in wanted
        if like.type is items.StringType.SLL and one_line and "'" not in wanted and wanted.isprintable():
            text = f"'{wanted}'"
        elif like.type.is_multiline() and not one_line:
            text = render.block(wanted)
    return tomlkit.value(text)

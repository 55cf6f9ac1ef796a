"""The split listing cache and opaque offset cursors for resources/list and resources/templates/list."""

from __future__ import annotations

import base64
import threading
from typing import cast

import mcp_types as types
from mcp.shared.exceptions import MCPError

from resources_qt.collection import Resources
from resources_qt.errors import INVALID_PARAMS
from resources_qt.resource import Resource

__all__ = ["ListingCache", "decode_cursor", "encode_cursor"]

_PREFIX = "rs1:"


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode("ascii")).decode("ascii")


def decode_cursor(cursor: str | None) -> int:
    """The offset a cursor stands for; a cursor we did not mint is -32602."""
    if not cursor:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        if not raw.startswith(_PREFIX):
            raise ValueError(raw)
        offset = int(raw[len(_PREFIX) :])
        if offset < 0:
            raise ValueError(raw)
    except (ValueError, UnicodeError) as exc:
        raise MCPError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}", {"cursor": cursor}) from exc
    return offset


class ListingCache:
    """The direct/template split, rebuilt only when `Resources.version` moves; pages convert lazily.

    Splitting 100,000 resources is one cheap pass per change; only the page
    being answered is converted to SDK models, so a listing costs the same
    whatever the catalogue's size.
    """

    def __init__(self, resources: Resources) -> None:
        self._resources = resources
        self._lock = threading.Lock()
        self._version = -1
        self._direct: list[Resource] = []
        self._templates: list[Resource] = []

    def _refresh(self) -> None:
        version = self._resources.version
        if version == self._version:
            return
        direct: list[Resource] = []
        templates: list[Resource] = []
        for resource in self._resources:
            (templates if resource.is_template else direct).append(resource)
        self._direct, self._templates, self._version = direct, templates, version

    def direct_page(self, cursor: str | None, page_size: int) -> tuple[list[types.Resource], str | None]:
        with self._lock:
            self._refresh()
            items, next_cursor = _page(self._direct, cursor, page_size)
        return [cast(types.Resource, r.to_mcp()) for r in items], next_cursor

    def template_page(
        self, cursor: str | None, page_size: int
    ) -> tuple[list[types.ResourceTemplate], str | None]:
        with self._lock:
            self._refresh()
            items, next_cursor = _page(self._templates, cursor, page_size)
        return [cast(types.ResourceTemplate, r.to_mcp()) for r in items], next_cursor


def _page(items: list[Resource], cursor: str | None, page_size: int) -> tuple[list[Resource], str | None]:
    offset = decode_cursor(cursor)
    if offset > len(items):
        raise MCPError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}", {"cursor": cursor})
    end = offset + page_size
    return items[offset:end], (encode_cursor(end) if end < len(items) else None)

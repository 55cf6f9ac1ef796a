"""Every page of a remote server's resources and templates, and its read answers as `ResourceContent`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from resources_qt.client.errors import RemoteError
from resources_qt.client.events import CatalogueListed, RemoteResource
from resources_qt.content import ResourceContent
from resources_qt.errors import ValidationError

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client

__all__ = ["MAX_ENTRIES", "MAX_PAGES", "list_catalogue", "to_content", "to_remote"]

MAX_PAGES = 1000
"""Pages of one listing followed at most: a server whose cursors never end cannot hold the client."""
MAX_ENTRIES = 100_000
"""Entries of one listing kept at most (resources and templates each)."""


def to_remote(entry: types.Resource | types.ResourceTemplate) -> RemoteResource:
    import mcp_types as types

    marks = entry.annotations
    annotations = marks.model_dump(by_alias=True, mode="json", exclude_none=True) if marks is not None else {}
    icons = tuple(icon.model_dump(by_alias=True, mode="json", exclude_none=True) for icon in entry.icons or ())
    common = {"name": entry.name, "title": entry.title or "", "description": entry.description or "",
              "mime_type": entry.mime_type or "", "annotations": annotations, "icons": icons}  # fmt: skip
    if isinstance(entry, types.Resource):
        return RemoteResource(uri=str(entry.uri), size=entry.size, **common)  # type: ignore[arg-type]
    return RemoteResource(uri_template=entry.uri_template, **common)  # type: ignore[arg-type]


async def list_catalogue(client: Client) -> CatalogueListed:
    """Follow `nextCursor` through both listings (bounded by MAX_PAGES and MAX_ENTRIES)."""
    resources: list[RemoteResource] = []
    templates: list[RemoteResource] = []
    pages = 0
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        pages += 1
        resources.extend(to_remote(item) for item in page.resources)
        cursor = page.next_cursor
        if not cursor or len(resources) >= MAX_ENTRIES:
            break
    truncated = bool(cursor)
    cursor = None
    for _ in range(MAX_PAGES):
        tpage = await client.list_resource_templates(cursor=cursor, cache_mode="bypass")
        pages += 1
        templates.extend(to_remote(item) for item in tpage.resource_templates)
        cursor = tpage.next_cursor
        if not cursor or len(templates) >= MAX_ENTRIES:
            break
    truncated = truncated or bool(cursor)
    return CatalogueListed(tuple(resources[:MAX_ENTRIES]), tuple(templates[:MAX_ENTRIES]), pages,
                           truncated=truncated)  # fmt: skip


def to_content(item: types.TextResourceContents | types.BlobResourceContents) -> ResourceContent:
    """One item of a read answer as the studio's content (RemoteError if the server sent an invalid one)."""
    import mcp_types as types

    try:
        if isinstance(item, types.BlobResourceContents):
            return ResourceContent.from_blob(str(item.uri), item.mime_type or "", item.blob)
        return ResourceContent.from_text(str(item.uri), item.mime_type or "", item.text)
    except ValidationError as exc:
        raise RemoteError(f"The server sent content the studio cannot show: {exc.message}") from exc

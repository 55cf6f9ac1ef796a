"""Helpers for the snippet tests: blocking reads and completions through a real pool."""

from __future__ import annotations

from collections.abc import Mapping

from resources_qt.content import ResourceContent
from resources_qt.snippets import SnippetPool

WAIT = 30.0


def read(
    pool: SnippetPool,
    source: str,
    *,
    key: str = "t",
    uri: str = "t://x",
    params: Mapping[str, object] | None = None,
    mime_type: str = "",
) -> list[ResourceContent]:
    future = pool.submit_read(key=key, source=source, uri=uri, params=params or {}, mime_type=mime_type)
    return future.result(WAIT)


def read_text(pool: SnippetPool, source: str, **kwargs: object) -> str:
    contents = read(pool, source, **kwargs)  # type: ignore[arg-type]
    assert len(contents) == 1 and contents[0].text is not None
    return contents[0].text


def complete(
    pool: SnippetPool, source: str, *, value: str = "", variable: str = "v", context: Mapping[str, str] | None = None
) -> list[str]:
    future = pool.submit_complete(key="c", source=source, variable=variable, value=value, context=context or {})
    return future.result(WAIT)


OK = "def read(uri, params):\n    return 'fine'\n"


def healthy(pool: SnippetPool) -> bool:
    return read_text(pool, OK, key="healthy") == "fine"

"""The ordered set of renderers a content view chooses from by MIME type."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from resources_qt.content import ResourceContent
from studio.preview.renderers.base import (
    DISPLAY_LIMIT,
    INLINE_LIMIT,
    Prepared,
    Renderer,
    content_size,
    displayable,
    human_size,
    mime_of,
)
from studio.preview.renderers.hex import hex_prepared

logger = logging.getLogger(__name__)

__all__ = ["RendererRegistry", "failure_line", "raw_prepared"]


def failure_line(exc: BaseException) -> str:
    """One line naming what went wrong, for a note (a message can be long or span lines)."""
    message = " ".join(str(exc).split())
    if len(message) > 200:
        message = message[:200] + "…"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def raw_prepared(content: ResourceContent, problem: str) -> Prepared:
    """`content` as received (text unhighlighted, or bytes in hex) under a note saying `problem`.

    Built from the content alone with nothing that can fail on hostile input, so whatever went
    wrong with a renderer the view still has something to show.
    """
    mime = mime_of(content)
    if content.is_blob:
        data = content.data()
        prepared = hex_prepared(data, mime)
    else:
        text = content.text or ""
        shown = displayable(text[:DISPLAY_LIMIT])
        prepared = Prepared("text", mime, content_size(content), text=shown)
        if len(text) > DISPLAY_LIMIT:
            prepared.notes.append(f"Showing the first {human_size(DISPLAY_LIMIT)} of the text.")
    prepared.notes.insert(0, problem)
    return prepared


class RendererRegistry:
    """Renderers in the order they are tried; the first that accepts a content and prepares it wins.

    Immutable once built, so one registry is shared by every view and every worker thread.
    """

    def __init__(self, renderers: Iterable[Renderer]) -> None:
        self._renderers = tuple(renderers)
        kinds = [r.kind for r in self._renderers]
        duplicates = sorted({k for k in kinds if kinds.count(k) > 1})
        if duplicates or "" in kinds:
            raise ValueError(f"renderers: every kind must be named once, got {kinds}")
        self._by_kind = {r.kind: r for r in self._renderers}

    @property
    def renderers(self) -> tuple[Renderer, ...]:
        return self._renderers

    def get(self, kind: str) -> Renderer | None:
        return self._by_kind.get(kind)

    def candidates(self, content: ResourceContent) -> list[Renderer]:
        mime = mime_of(content)
        return [r for r in self._renderers if r.accepts(mime, is_blob=content.is_blob)]

    def prepare_inline(self, content: ResourceContent) -> bool:
        """Whether `content` is cheap enough to prepare on the GUI thread."""
        size = len(content.blob or "") if content.is_blob else len(content.text or "")
        if size > INLINE_LIMIT:
            return False
        first = next(iter(self.candidates(content)), None)
        return first is None or not first.off_gui_thread

    def prepare(self, content: ResourceContent) -> Prepared:
        """Decide how to show `content` and do the heavy work; safe on any thread (no widgets).

        Never raises: a renderer that fails on the content (a RecursionError, text that is not
        Unicode, a bug) leaves a note saying so over the content as received.
        """
        for renderer in self.candidates(content):
            try:
                prepared = renderer.prepare(content)
            except Exception as exc:
                logger.warning("the %s renderer failed on %s content", renderer.kind, mime_of(content), exc_info=True)
                problem = f"Could not render the content ({failure_line(exc)}); showing it as received."
                return raw_prepared(content, problem)
            if prepared is not None:
                return prepared
        logger.warning("no renderer took %s content", mime_of(content))
        return Prepared("none", mime_of(content), content_size(content),
                        notes=["No renderer can show this content; use Save content as..."])  # fmt: skip

"""The ordered set of renderers a content view chooses from by MIME type."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from resources_qt.content import ResourceContent
from studio.preview.renderers.base import INLINE_LIMIT, Prepared, Renderer, content_size, mime_of

logger = logging.getLogger(__name__)

__all__ = ["RendererRegistry"]


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
        """Decide how to show `content` and do the heavy work; safe on any thread (no widgets)."""
        for renderer in self.candidates(content):
            prepared = renderer.prepare(content)
            if prepared is not None:
                return prepared
        logger.warning("no renderer took %s content", mime_of(content))
        return Prepared("none", mime_of(content), content_size(content),
                        notes=["No renderer can show this content; use Save content as..."])  # fmt: skip

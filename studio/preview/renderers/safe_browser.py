"""A QTextBrowser that loads nothing: no network, no local files, no relative paths."""

from __future__ import annotations

import logging

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

logger = logging.getLogger(__name__)

__all__ = ["SafeTextBrowser"]

REFUSED_KEPT = 100
"""Refused addresses remembered for the note and for tests; a page can ask for any number."""


class SafeTextBrowser(QTextBrowser):
    """Shows HTML or Markdown from a resource without fetching what it refers to.

    Content comes from whatever a reader returned, so an `<img src="http://...">` must not become
    a request (a tracking pixel, a probe of the local network) and `src="/etc/..."` must not read
    local files: every resource the document asks for is refused, inline `data:` URLs included
    (they would need decoding we do not want to trust either). Links are not followed.

    Signals:
        resource_refused(str url): the document asked for `url` and got nothing.
    """

    resource_refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self._refused: dict[str, None] = {}  # distinct addresses, in the order first asked for
        self._refused_count = 0

    @property
    def refused_urls(self) -> list[str]:
        """The distinct addresses refused since the last `clear_refused` (at most REFUSED_KEPT of them)."""
        return list(self._refused)

    @property
    def refused_count(self) -> int:
        """How many distinct addresses were refused (Qt asks again for the same one at every layout)."""
        return self._refused_count

    def clear_refused(self) -> None:
        self._refused = {}
        self._refused_count = 0

    def loadResource(self, type: int, name: QUrl | str, /) -> object:
        url = name.toString() if isinstance(name, QUrl) else name
        if url in self._refused:
            return None
        self._refused_count += 1
        if len(self._refused) < REFUSED_KEPT:
            self._refused[url] = None
        logger.debug("refused to load %s (resource type %s)", url[:200], type)
        self.resource_refused.emit(url)
        return None

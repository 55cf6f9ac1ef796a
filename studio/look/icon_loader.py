"""Icon thumbnails decoded off the GUI thread, straight to thumbnail size, with caps on what a project may declare."""

from __future__ import annotations

import base64
import binascii
import functools
import logging
import os
import urllib.parse
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QCoreApplication,
    QObject,
    QRunnable,
    QSize,
    Qt,
    QThreadPool,
    Signal,
    Slot,
)
from PySide6.QtGui import QIcon, QImage, QImageReader, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from studio.look.svg_budget import ICON_BUDGET, count_svg, svg_problem

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_DATA_URI_CHARS",
    "MAX_DIMENSION",
    "MAX_FILE_BYTES",
    "IconLoader",
    "IconResult",
    "decode_thumbnail",
    "icon_loader",
    "locate_icon",
    "to_icon",
]

MAX_DATA_URI_CHARS = 1024 * 1024
"""A `data:` icon longer than this (1 MB of text) is refused before it is decoded."""
MAX_FILE_BYTES = 1024 * 1024
"""A local icon file larger than this is not read."""
MAX_DIMENSION = 4096
"""An image or SVG declaring a side longer than this is refused, whatever its file size."""
_CACHE_SIZE = 512


@dataclass(frozen=True)
class IconResult:
    """A finished load: the thumbnail, or why there is none (`problem`; "" for a remote icon, not fetched)."""

    image: QImage | None
    problem: str


@dataclass(frozen=True)
class _Located:
    data_uri: str = ""
    path: Path | None = None
    problem: str = ""


def locate_icon(src: str, *, base_dir: str, allowed: frozenset[str] = frozenset()) -> _Located:
    """Where an icon's bytes would come from, or why they are not loaded (cheap: no reading, no decoding).

    A project may only show `data:` icons and files under its own folder; `file://` URIs,
    UNC and other paths are followed only when the user chose the file (`allowed`).
    """
    src = src.strip()
    if src.startswith("data:"):
        if len(src) > MAX_DATA_URI_CHARS:
            return _Located(problem=f"not loaded: the data: URI is {_size(len(src))}, over the "
                                    f"{_size(MAX_DATA_URI_CHARS)} limit")  # fmt: skip
        return _Located(data_uri=src)
    network = src.startswith(("\\\\", "//"))
    if src.startswith("file:"):
        parsed = urllib.parse.urlparse(src)
        network = network or parsed.netloc not in ("", "localhost")
        candidate = Path(urllib.parse.unquote(parsed.path))
        followed_only_if_chosen = True
    elif "://" in src:
        return _Located()  # remote: never fetched by the studio
    else:
        candidate = Path(src)
        followed_only_if_chosen = False
    if network:
        return _Located(problem="not loaded: network (UNC) paths are not followed")
    if not candidate.is_absolute():
        if not base_dir:
            return _Located(problem="not loaded: the project has no folder yet (save it first)")
        candidate = Path(base_dir) / candidate
    real = os.path.realpath(candidate)
    if real in allowed:
        return _Located(path=Path(real))
    if followed_only_if_chosen:
        return _Located(problem="not loaded: file:// icons are only shown when chosen with the file dialog")
    root = os.path.realpath(base_dir) if base_dir else ""
    if not root or os.path.commonpath([root, real]) != root:
        return _Located(problem="not loaded: outside the project folder")
    return _Located(path=Path(real))


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):.1f} MB" if count >= 1024 * 1024 else f"{count / 1024:.0f} KB"


def _bytes_of(located: _Located) -> bytes:
    """The icon's bytes; raises ValueError saying why they cannot be had."""
    if located.data_uri:
        header, _, payload = located.data_uri.partition(",")
        try:
            if header.endswith(";base64"):
                return base64.b64decode(payload, validate=False)
            return urllib.parse.unquote_to_bytes(payload)
        except (binascii.Error, ValueError):
            raise ValueError("not loaded: the data: URI does not decode") from None
    assert located.path is not None
    try:
        size = located.path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValueError(f"not loaded: the file is {_size(size)}, over the {_size(MAX_FILE_BYTES)} limit")
        return located.path.read_bytes()
    except OSError as exc:
        raise ValueError(f"not loaded: {exc.strerror or exc}") from None


def _too_big(size: QSize) -> str:
    if size.width() > MAX_DIMENSION or size.height() > MAX_DIMENSION:
        return (f"not loaded: it declares {size.width()}x{size.height()}, over the "
                f"{MAX_DIMENSION}x{MAX_DIMENSION} limit")  # fmt: skip
    return ""


def _svg_thumbnail(data: bytes, size: int) -> IconResult:
    count = count_svg(data, ICON_BUDGET)
    if count.invalid:
        return IconResult(None, f"not loaded: {count.invalid}")
    problem = svg_problem(count, ICON_BUDGET, side=size)
    if problem:
        return IconResult(None, f"not loaded: too complex to draw: {problem}")
    renderer = QSvgRenderer(QByteArray(data))
    if not renderer.isValid():
        return IconResult(None, "not loaded: the SVG does not parse")
    declared = renderer.defaultSize()
    problem = _too_big(declared)
    if problem:
        return IconResult(None, problem)
    target = declared.scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio) if not declared.isEmpty() \
        else QSize(size, size)  # fmt: skip
    image = QImage(target.expandedTo(QSize(1, 1)), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return IconResult(image, "")


def _gunzipped(data: bytes) -> bytes | None:
    """An .svgz icon's SVG, or None when it expands past ICON_BUDGET's size (a small file can hold gigabytes)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        inflated = inflater.decompress(data, ICON_BUDGET.max_bytes + 1)
    except zlib.error:
        return b""
    return None if len(inflated) > ICON_BUDGET.max_bytes else inflated


def decode_thumbnail(data: bytes, size: int) -> IconResult:
    """Decode `data` (PNG, JPEG, GIF, SVG, …) straight into at most `size` x `size` pixels.

    The full-size image is never allocated: raster images are scaled by the reader
    while decoding, SVGs are rendered into the thumbnail, and only within ICON_BUDGET: Qt holds
    the GIL while it parses and draws, so an SVG this thread draws stalls the window as long.
    """
    if data[:2] == b"\x1f\x8b":  # gzip: an .svgz, which Qt's image reader would draw unchecked
        inflated = _gunzipped(data)
        if inflated is None:
            limit = _size(ICON_BUDGET.max_bytes)
            return IconResult(None, f"not loaded: the compressed SVG expands past the {limit} limit")
        if b"<svg" not in inflated[:4096]:
            return IconResult(None, "not loaded: compressed, but not an SVG")
        data = inflated
    if b"<svg" in data[:4096]:
        return _svg_thumbnail(data, size)
    payload = QByteArray(data)  # kept in a name: the buffer does not own it
    buffer = QBuffer(payload)
    buffer.open(QBuffer.OpenModeFlag.ReadOnly)
    if bytes(QImageReader.imageFormat(buffer).data()).lower() in (b"svg", b"svgz"):  # one the test above missed
        return IconResult(None, "not loaded: an SVG whose <svg> tag is not in its first 4 KB")
    reader = QImageReader(buffer)
    declared = reader.size()
    if not declared.isValid():
        return IconResult(None, f"not loaded: {reader.errorString() or 'not an image'}")
    problem = _too_big(declared)
    if problem:
        return IconResult(None, problem)
    reader.setScaledSize(declared.scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio).expandedTo(QSize(1, 1)))
    image = reader.read()
    if image.isNull():
        return IconResult(None, f"not loaded: {reader.errorString() or 'the image does not decode'}")
    return IconResult(image, "")


class _Relay(QObject):
    """Carries a worker's result to the GUI thread (it lives there; the emit is queued)."""

    done = Signal(str, object)


class _LoadTask(QRunnable):
    def __init__(self, key: str, located: _Located, size: int, relay: _Relay) -> None:
        super().__init__()
        self._key = key
        self._located = located
        self._size = size
        self._relay = relay

    def run(self) -> None:
        try:
            result = decode_thumbnail(_bytes_of(self._located), self._size)
        except ValueError as exc:
            result = IconResult(None, str(exc))
        except Exception as exc:  # a decoder failure must not lose the answer
            logger.exception("Icon decoding failed")
            result = IconResult(None, f"not loaded: {exc}")
        self._relay.done.emit(self._key, result)


class IconLoader(QObject):
    """Loads icon thumbnails on a thread pool and caches them; results come back by signal.

    Signals:
        loaded(str key): the thumbnail (or problem) for `key` is ready; ask `result()` again.
    """

    loaded = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(2)
        self._relay = _Relay(self)
        self._relay.done.connect(self._on_done)
        self._results: OrderedDict[str, IconResult] = OrderedDict()
        self._pending: set[str] = set()
        self._allowed: set[str] = set()

    def allow(self, path: str) -> None:
        """The user chose this file (in a file dialog): show it wherever it is."""
        self._allowed.add(os.path.realpath(path))

    def result(self, src: str, *, base_dir: str, size: int) -> IconResult | None:
        """The icon's result if known; None while it loads (`loaded` follows). Never blocks on decoding."""
        located = locate_icon(src, base_dir=base_dir, allowed=frozenset(self._allowed))
        if located.problem or (not located.data_uri and located.path is None):
            return IconResult(None, located.problem)
        try:
            key = self._key(src, base_dir=base_dir, size=size, located=located)
        except OSError as exc:
            return IconResult(None, f"not loaded: {exc.strerror or exc}")
        known = self._results.get(key)
        if known is not None:
            self._results.move_to_end(key)
            return known
        if key not in self._pending:
            self._pending.add(key)
            self._pool.start(_LoadTask(key, located, size, self._relay))
        return None

    def key(self, src: str, *, base_dir: str, size: int) -> str:
        """The name `loaded` announces a result under ("" for icons that are not loaded)."""
        located = locate_icon(src, base_dir=base_dir, allowed=frozenset(self._allowed))
        try:
            return self._key(src, base_dir=base_dir, size=size, located=located)
        except OSError:
            return ""

    @staticmethod
    def _key(src: str, *, base_dir: str, size: int, located: _Located) -> str:
        # A file's key carries its size and time, so an edited or newly created file is loaded
        # again; long data: URIs are keyed by their hash, so the cache holds no second copy.
        stamp = ""
        if located.path is not None:
            info = located.path.stat()
            stamp = f"{info.st_size}:{info.st_mtime_ns}"
        return f"{size}|{base_dir}|{stamp}|{hash(src) if len(src) > 256 else src}"

    def wait(self, msecs: int = 30_000) -> bool:
        """Wait for the running decodes (for shutdown and tests); results still arrive by signal."""
        return bool(self._pool.waitForDone(msecs))

    @Slot(str, object)
    def _on_done(self, key: str, result: object) -> None:
        self._pending.discard(key)
        if isinstance(result, IconResult):
            self._results[key] = result
            while len(self._results) > _CACHE_SIZE:
                self._results.popitem(last=False)
        self.loaded.emit(key)


def to_icon(image: QImage | None) -> QIcon | None:
    """A QIcon from a thumbnail (GUI thread only: pixmaps live there)."""
    return QIcon(QPixmap.fromImage(image)) if image is not None and not image.isNull() else None


@functools.cache
def icon_loader() -> IconLoader:
    """The application's icon loader (created on first use, owned by the application)."""
    return IconLoader(QCoreApplication.instance())

"""The render child: draws one PDF or SVG in a process of its own, under a memory limit, and sends back pixels.

Run as a script (`python -I render_child.py`), never imported by the studio: it imports only the
standard library and what its kind needs (pypdfium2 for a PDF, QtGui and QtSvg for an SVG), so a
PDF child starts in about 0.2 s. The parent (render_process.py) writes one JSON line (the job)
and the document's bytes to stdin, and reads messages from stdout: a JSON line each, followed by
`bytes` raw bytes when the line says so. The parent kills the child at its deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, BinaryIO

MEGABYTE = 1024 * 1024


def _limit_memory(megabytes: int) -> None:
    """Cap the address space (where the platform has RLIMIT_AS) and keep core dumps off."""
    try:
        import resource
    except ImportError:  # Windows: the deadline still holds
        return
    for name, value in (("RLIMIT_AS", megabytes * MEGABYTE), ("RLIMIT_CORE", 0)):
        limit = getattr(resource, name, None)
        if limit is None:
            continue
        with contextlib.suppress(ValueError, OSError):  # macOS refuses RLIMIT_AS; the deadline still holds
            resource.setrlimit(limit, (value, value))


def _send(out: BinaryIO, header: dict[str, Any], payload: bytes | memoryview = b"") -> None:
    if payload:
        header = {**header, "bytes": len(payload)}
    out.write(json.dumps(header).encode("ascii") + b"\n")
    if payload:
        out.write(payload)
    out.flush()


def _render_pdf(data: bytes, options: dict[str, Any], out: BinaryIO) -> None:
    import pypdfium2

    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        _send(out, {"error": f"not a readable PDF: {exc}", "unreadable": True})
        return
    count = len(document)
    _send(out, {"pages": count})
    width, max_height = float(options["width"]), float(options["max_height"])
    for number in range(min(count, int(options["limit"]))):
        page = document[number]
        page_width, page_height = max(page.get_width(), 1.0), max(page.get_height(), 1.0)
        scale = min(width / page_width, max_height / page_height)
        bitmap = page.render(scale=scale, rev_byteorder=True)  # RGB, as QImage.Format_RGB888 reads it
        header = {"page": number, "width": bitmap.width, "height": bitmap.height, "stride": bitmap.stride}
        _send(out, header, memoryview(bitmap.buffer))
        bitmap.close()
        page.close()


def _render_svg(data: bytes, options: dict[str, Any], out: BinaryIO) -> None:
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QByteArray, QSize, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication(["render-child"])  # text in an SVG needs the font database  # noqa: F841
    renderer = QSvgRenderer(QByteArray(data))
    if not renderer.isValid():
        _send(out, {"invalid": True})
        return
    size = renderer.defaultSize()
    if size.isEmpty():
        size = QSize(256, 256)
    side = int(options["max_side"])
    size = size.scaled(side, side, Qt.AspectRatioMode.KeepAspectRatio) if size.width() > side or size.height() > side \
        else size  # fmt: skip
    image = QImage(size.expandedTo(QSize(1, 1)), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    header = {"width": image.width(), "height": image.height(), "stride": image.bytesPerLine(),
              "declared": [renderer.defaultSize().width(), renderer.defaultSize().height()]}  # fmt: skip
    _send(out, header, bytes(image.constBits()))


def main() -> int:
    source, out = sys.stdin.buffer, sys.stdout.buffer
    job = json.loads(source.readline())
    _limit_memory(int(job["memory_mb"]))
    try:
        data = source.read(int(job["size"]))
        if job["kind"] == "pdf":
            _render_pdf(data, job["options"], out)
        else:
            _render_svg(data, job["options"], out)
    except MemoryError:
        _send(out, {"error": "out of memory", "memory": True})
        return 3
    _send(out, {"done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Icons: thumbnails decoded off the GUI thread at thumbnail size; bombs, big data: URIs and foreign paths refused."""

from __future__ import annotations

import base64
import resource
import struct
import zlib
from pathlib import Path

from PySide6.QtCore import QBuffer
from PySide6.QtGui import QColor, QImage

from resources_qt.resource import Icon
from studio.builder.icons_table import THUMB, IconsTable
from studio.look.icon_loader import MAX_DIMENSION, decode_thumbnail, icon_loader

BOMB_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000" viewBox="0 0 10 10">'
    '<rect width="10" height="10" fill="red"/></svg>'
)


def png_bytes(width: int = 8, height: int = 8) -> bytes:
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(QColor("red"))
    buffer = QBuffer()
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(buffer.data())


def png_declaring(width: int, height: int) -> bytes:
    """A tiny PNG whose header declares `width` x `height` (a decompression bomb's shape)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(
        b"IEND", b""
    )


def make(qtbot, folder: Path) -> IconsTable:
    table = IconsTable()
    qtbot.addWidget(table)
    table.set_base_dir(str(folder))
    table.show()
    return table


def settled(table: IconsTable, row: int) -> bool:
    item = table.table.item(row, 0)
    return item is not None and (not item.icon().isNull() or bool(table.thumbnail_problem(row)))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_bombs_are_refused_with_a_message_and_the_table_stays_responsive(qtbot, tmp_path: Path):
    (tmp_path / "bomb.svg").write_text(BOMB_SVG, encoding="utf-8")
    (tmp_path / "bomb.png").write_bytes(png_declaring(100_000, 100_000))
    huge = "data:image/png;base64," + "A" * (40 * 1024 * 1024)
    before = peak_rss_mb()
    (tmp_path / "ok.png").write_bytes(png_bytes())
    table = make(qtbot, tmp_path)
    table.set_icons([Icon("bomb.svg"), Icon("bomb.png"), Icon(huge, "image/png"), Icon("ok.png")])
    # The event loop keeps running (the decodes are elsewhere) until every row has its answer.
    qtbot.waitUntil(lambda: all(settled(table, row) for row in range(4)), timeout=20_000)
    assert "100000x100000" in table.thumbnail_problem(0) and f"{MAX_DIMENSION}x{MAX_DIMENSION}" in (
        table.thumbnail_problem(0)
    )
    assert "100000x100000" in table.thumbnail_problem(1)
    assert "40.0 MB, over the 1.0 MB limit" in table.thumbnail_problem(2)
    assert table.thumbnail_problem(3) == "" and not table.table.item(3, 0).icon().isNull()
    # Nothing near a 100000x100000 image (40 GB) was allocated.
    assert peak_rss_mb() - before < 400
    # The 40 MB source is shown shortened but kept whole.
    assert len(table.table.item(2, 1).text()) < 3000
    assert table.icons()[2].src == huge


def test_only_files_under_the_project_folder_are_shown_unless_chosen(qtbot, tmp_path: Path):
    project = tmp_path / "project"
    elsewhere = tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (elsewhere / "secret.png").write_bytes(png_bytes())
    (project / "link.png").symlink_to(elsewhere / "secret.png")
    table = make(qtbot, project)
    table.set_icons([
        Icon(str(elsewhere / "secret.png")),
        Icon("../elsewhere/secret.png"),
        Icon("link.png"),
        Icon((elsewhere / "secret.png").as_uri()),
        Icon("//fileserver/share/icon.png"),
        Icon("\\\\fileserver\\share\\icon.png"),
    ])  # fmt: skip
    for row in range(3):
        assert table.thumbnail_problem(row) == "not loaded: outside the project folder"
        assert table.table.item(row, 0).icon().isNull()
    assert "file:// icons are only shown when chosen" in table.thumbnail_problem(3)
    assert "network (UNC) paths are not followed" in table.thumbnail_problem(4)
    assert "network (UNC) paths are not followed" in table.thumbnail_problem(5)
    table.add_chosen_file(str(elsewhere / "secret.png"))
    qtbot.waitUntil(lambda: settled(table, 6))
    assert not table.table.item(6, 0).icon().isNull() and table.icons()[6].src == str(elsewhere / "secret.png")


def test_a_missing_file_is_marked_and_shown_once_it_exists(qtbot, tmp_path: Path):
    table = make(qtbot, tmp_path)
    table.set_icons([Icon("later.png")])
    assert "No such file" in table.thumbnail_problem(0)
    (tmp_path / "later.png").write_bytes(png_bytes())
    table.set_icons([Icon("later.png")])
    qtbot.waitUntil(lambda: settled(table, 0))
    assert table.thumbnail_problem(0) == "" and not table.table.item(0, 0).icon().isNull()


def test_decoding_goes_straight_to_thumbnail_size():
    svg = decode_thumbnail(BOMB_SVG.replace("100000", "2000").encode(), THUMB)
    assert svg.image is not None and svg.image.width() <= THUMB and svg.image.height() <= THUMB
    png = decode_thumbnail(png_bytes(1000, 500), THUMB)
    assert png.image is not None and (png.image.width(), png.image.height()) == (THUMB, THUMB // 2)
    assert decode_thumbnail(b"not an image", THUMB).problem.startswith("not loaded")


def test_results_are_delivered_by_signal_from_a_pool_thread(qtbot, tmp_path: Path):
    loader = icon_loader()
    src = "data:image/png;base64," + base64.b64encode(png_bytes(3, 3)).decode()
    assert loader.result(src, base_dir=str(tmp_path), size=7) is None  # nothing decoded on this thread
    with qtbot.waitSignal(loader.loaded, timeout=10_000) as loaded:
        pass
    assert loaded.args == [loader.key(src, base_dir=str(tmp_path), size=7)]
    result = loader.result(src, base_dir=str(tmp_path), size=7)
    assert result is not None and result.image is not None and result.image.width() == 7

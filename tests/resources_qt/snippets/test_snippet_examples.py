"""The bundled example projects: they load, save byte for byte, and every sample URI reads through a real pool."""

from __future__ import annotations

import asyncio
import struct
import zlib
from pathlib import Path

import pytest

from resources_qt.content import ResourceContent
from resources_qt.project import dumps_project, load_project
from resources_qt.snippets import SnippetPool, bind_project

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
NAMES = ["app_settings", "knowledge_base", "notes", "support_desk", "ticket_attachments"]


def _valid_png(data: bytes) -> bool:
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return False
    position, idat = 8, b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
        if zlib.crc32(kind + body) != crc:
            return False
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        if kind == b"IDAT":
            idat += body
        position += 12 + length
    return len(zlib.decompress(idat)) == height * (1 + 3 * width)


def test_the_examples_are_the_ones_shipped() -> None:
    assert sorted(path.stem for path in EXAMPLES.glob("*.toml")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_example_saves_byte_for_byte(name: str) -> None:
    path = EXAMPLES / f"{name}.toml"
    assert dumps_project(load_project(path)) == path.read_text(encoding="utf-8")


async def _read_samples(name: str, pool: SnippetPool) -> dict[str, list[ResourceContent]]:
    project = load_project(EXAMPLES / f"{name}.toml")
    resources = bind_project(project, pool)
    out: dict[str, list[ResourceContent]] = {}
    for spec in project.resources:
        assert spec.sample_uris(), f"{spec.name} has nothing to preview"
        for uri in spec.sample_uris():
            match = resources.resolve(uri)
            assert match is not None and match.resource.name == spec.name, uri
            out[uri] = await match.resource.read(uri, match.params)
        for variable, completer in resources.get(spec.name).completions.items():  # type: ignore[union-attr]
            values = completer if isinstance(completer, list) else await completer(variable, "", {})
            assert values, f"{spec.name}.{variable} completes to nothing"
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_sample_uri_reads(pool: SnippetPool, name: str) -> None:
    read = asyncio.run(_read_samples(name, pool))
    for uri, contents in read.items():
        assert contents and all(c.uri == uri for c in contents), uri
        for content in contents:
            if content.mime_type == "image/png":
                assert _valid_png(content.data()), uri
            else:
                assert content.text, uri


def test_ticket_attachments_differ_per_instance(pool: SnippetPool) -> None:
    project = load_project(EXAMPLES / "ticket_attachments.toml")
    assert project.find("ticket_attachment").mime_type == ""  # type: ignore[union-attr]
    read = asyncio.run(_read_samples("ticket_attachments", pool))
    kinds = {uri: (c[0].mime_type, c[0].is_blob) for uri, c in read.items() if "attachment" in uri}
    assert kinds["tickets://1001/attachment"] == ("text/plain", False)
    assert kinds["tickets://1002/attachment"] == ("image/png", True)


def test_support_desk_is_a_rich_default(pool: SnippetPool) -> None:
    project = load_project(EXAMPLES / "support_desk.toml")
    assert project.server.notifications and project.server.subscriptions
    templates = [spec.uri_template for spec in project.resources if spec.is_template]
    assert any("{+path}" in template for template in templates)
    read = asyncio.run(_read_samples("support_desk", pool))
    mimes = {c.mime_type for contents in read.values() for c in contents}
    assert {"application/json", "text/markdown", "text/csv", "image/svg+xml", "image/png"} <= mimes

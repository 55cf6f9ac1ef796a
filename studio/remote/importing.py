"""Remote entries as project resources: a static snapshot of what was read (and, with an upstream, a proxy)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection

from resources_qt.client import RemoteResource, Target
from resources_qt.content import ResourceContent
from resources_qt.errors import ValidationError
from resources_qt.project import ResourceSpec
from resources_qt.project.upstreams import UpstreamSpec
from resources_qt.resource import Annotations, Audience, Icon

__all__ = [
    "SNAPSHOT_LIMIT", "NotImportable", "metadata_spec", "static_spec", "unique_name", "upstream_for", "upstream_spec",
]

SNAPSHOT_LIMIT = 256 * 1024
"""Bytes of content a static import copies into the project file at most (it lives in the reader's source)."""


class NotImportable(Exception):
    """An entry that cannot be imported: `message` says why in one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def unique_name(wanted: str, taken: Collection[str]) -> str:
    """`wanted` as a resource name (letters, digits, _ - .), numbered when the project has it already."""
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", wanted).strip("_") or "remote"
    name, number = base, 2
    while name in taken:
        name, number = f"{base}_{number}", number + 1
    return name


def _annotations(entry: RemoteResource) -> Annotations | None:
    marks = entry.annotations
    if not marks:
        return None
    audience: tuple[Audience, ...] = tuple(
        "user" if role == "user" else "assistant" for role in marks.get("audience", ()) if role in ("user", "assistant")
    )
    priority = marks.get("priority")
    modified = marks.get("lastModified")
    try:
        return Annotations(audience=audience, priority=float(priority) if isinstance(priority, int | float) else None,
                           last_modified=modified if isinstance(modified, str) else None)
    except ValidationError:
        return None  # annotations the project cannot hold are left behind, not the resource


def _icons(entry: RemoteResource) -> list[Icon]:
    icons: list[Icon] = []
    for icon in entry.icons:
        src = icon.get("src")
        if not isinstance(src, str) or not src.strip():
            continue
        mime = icon.get("mimeType")
        sizes = icon.get("sizes")
        try:
            icons.append(Icon(src=src, mime_type=mime if isinstance(mime, str) else None,
                              sizes=tuple(str(s) for s in sizes) if isinstance(sizes, list) else ()))  # fmt: skip
        except ValidationError:
            continue
    return icons


def metadata_spec(entry: RemoteResource, *, taken: Collection[str]) -> ResourceSpec:
    """What the entry declares (name, title, description, MIME type, size, annotations, icons), no reader yet."""
    return ResourceSpec(name=unique_name(entry.name or entry.key, taken), title=entry.title,
                        description=entry.description, uri=entry.uri, uri_template=entry.uri_template,
                        mime_type=entry.mime_type, size=entry.size, annotations=_annotations(entry),
                        icons=_icons(entry))  # fmt: skip


def static_spec(entry: RemoteResource | None, uri: str, contents: tuple[ResourceContent, ...],
                *, taken: Collection[str]) -> ResourceSpec:  # fmt: skip
    """A direct resource at `uri` whose reader returns a copy of `contents` (the first item).

    Raises:
        NotImportable: nothing was read, or the content is over SNAPSHOT_LIMIT.
    """
    if not contents:
        raise NotImportable(f"{uri}: nothing to copy (the read returned no content)")
    content = contents[0]
    size = len(content.data())
    if size > SNAPSHOT_LIMIT:
        raise NotImportable(f"{uri}: {size:,} bytes is over the {SNAPSHOT_LIMIT // 1024} KiB a static copy may hold; "
                           "import it from the server instead")  # fmt: skip
    if content.is_blob:
        body = f"    return bytes.fromhex({content.data().hex()!r})\n"
    else:
        body = f"    return {content.text or ''!r}\n"
    base = entry if entry is not None and not entry.is_template else None
    spec = metadata_spec(base, taken=taken) if base is not None else ResourceSpec(
        name=unique_name(uri.rstrip("/").rsplit("/", 1)[-1] or "remote", taken))  # fmt: skip
    spec.uri, spec.uri_template = uri, ""
    spec.mime_type = content.mime_type or spec.mime_type
    spec.size = size
    note = f"# A copy of {uri}, read from the remote server when it was imported.\n"
    spec.reader = f"{note}def read(uri, params):\n{body}"
    return spec


def upstream_for(target: Target, declared: Collection[UpstreamSpec], *, name: str) -> tuple[UpstreamSpec, bool]:
    """The project's upstream for `target` (one at the same URL or command), or a new one: (upstream, is new).

    A token is never written to the project: a new upstream names an environment variable for it.
    """
    command = shlex.join(target.command) if target.command else ""
    for upstream in declared:
        if (target.url and upstream.url == target.url) or (command and upstream.command == command):
            return upstream, False
    chosen = unique_name(name, {u.name for u in declared})
    token_env = re.sub(r"[^A-Z0-9_]", "_", f"{chosen.upper()}_TOKEN") if target.token else ""
    era = target.era
    return UpstreamSpec(name=chosen, url=target.url, command=command, era=era, token_env=token_env), True


def upstream_spec(entry: RemoteResource, upstream: str, *, taken: Collection[str]) -> ResourceSpec:
    """The entry as a project resource the server reads through `upstream` (no reader of its own)."""
    spec = metadata_spec(entry, taken=taken)
    spec.upstream = upstream
    return spec

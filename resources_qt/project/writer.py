"""Saving project files: a stable, readable TOML layout, written atomically."""

from __future__ import annotations

import logging
import math
import os
import re
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from resources_qt.errors import ValidationError
from resources_qt.project.model import FORMAT_VERSION, Project, ResourceSpec, ServerSettings

__all__ = ["dumps_project", "save_project"]

logger = logging.getLogger(__name__)


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_LITERAL_UNSAFE = re.compile(r"'''|[\x00-\x08\x0b-\x1f\x7f]|\r")


def _string(value: str) -> str:
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            # TOML (and UTF-8) cannot carry a lone surrogate; refuse before anything is written.
            raise ValidationError(
                f"cannot save the string {value[:40]!r}: it holds a lone surrogate U+{code:04X}"
            )
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        body = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items())
        return "{ " + body + " }" if body else "{}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _block(value: str) -> str:
    """A snippet as a multi-line literal string when it can be one, so it reads as code."""
    if "\n" in value and not _LITERAL_UNSAFE.search(value) and not value.endswith("'"):
        return "'''\n" + value + "'''"
    return _string(value)


def dumps_project(project: Project) -> str:
    """The project as TOML, in a stable key order; loading the result gives the same project."""
    lines = [f"format = {FORMAT_VERSION}"]
    # Top-level keys must come before the first table, or they would belong to it.
    if project.prelude:
        lines += ["", f"prelude = {_block(project.prelude)}"]
    lines += ["", "[server]"]
    defaults = ServerSettings()
    for key in ServerSettings.__dataclass_fields__:
        value = getattr(project.server, key)
        if key == "name" or (value != getattr(defaults, key) and value is not None):
            lines.append(f"{key} = {_value(value)}")
    for spec in project.resources:
        lines += ["", "[[resources]]", *_resource_lines(spec)]
    return "\n".join(lines) + "\n"


def _resource_lines(spec: ResourceSpec) -> list[str]:
    out: list[str] = []
    for key in ("name", "title", "description", "uri", "uri_template", "mime_type"):
        value = getattr(spec, key)
        if value or key == "name":
            out.append(f"{key} = {_value(value)}")
    if spec.size is not None:
        out.append(f"size = {spec.size}")
    if spec.samples:
        out.append(f"samples = {_value(spec.samples)}")
    if spec.icons:
        icons = []
        for icon in spec.icons:
            entry: dict[str, Any] = {"src": icon.src}
            if icon.mime_type:
                entry["mime_type"] = icon.mime_type
            if icon.sizes:
                entry["sizes"] = list(icon.sizes)
            icons.append(entry)
        out.append(f"icons = {_value(icons)}")
    if spec.annotations is not None and not spec.annotations.is_empty:
        ann: dict[str, Any] = {}
        if spec.annotations.audience:
            ann["audience"] = list(spec.annotations.audience)
        if spec.annotations.priority is not None:
            ann["priority"] = spec.annotations.priority
        if spec.annotations.last_modified:
            ann["last_modified"] = spec.annotations.last_modified
        out.append(f"annotations = {_value(ann)}")
    if spec.completions:
        out.append(f"completions = {_value(spec.completions)}")
    if spec.cache is not None:
        out.append(f"cache = {_value({'ttl_ms': spec.cache.ttl_ms, 'scope': spec.cache.scope})}")
    if spec.unchecked_values:
        out.append("unchecked_values = true")
    if spec.complete:
        out.append(f"complete = {_block(spec.complete)}")
    if spec.reader:
        out.append(f"reader = {_block(spec.reader)}")
    return out


def save_project(project: Project, path: str | os.PathLike[str] | None = None) -> Path:
    """Write the project atomically (temporary file, fsync, rename); returns the path written.

    A crash or error during the save leaves either the old file or the new
    one, never a truncated mix, and no temporary file behind. The file keeps
    the permissions of the one it replaces; a symlink stays a symlink.

    Raises:
        ValidationError: the project has no path yet, or holds a string TOML
            cannot carry (-32602); nothing is written then.
        OSError: the directory or disk refused the write; the old file is intact.
    """
    target = Path(path) if path is not None else project.path
    if target is None:
        raise ValidationError("The project has no file name yet; give a path to save it to")
    data = dumps_project(project).encode("utf-8")
    # Write through a symlink to the file it points at, as an editor should.
    real = Path(os.path.realpath(target))
    real.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            # mkstemp creates 0600; keep the mode the user had (or the umask default).
            os.fchmod(handle.fileno(), _file_mode(real))
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, real)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_dir(real.parent)
    project.path = target
    logger.info("Saved project %s (%d resources, %d bytes)", target, len(project.resources), len(data))
    return target


def _file_mode(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        pass
    umask = 0o022
    try:
        # Reading the umask via os.umask() would briefly change it for every thread.
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    umask = int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o666 & ~umask


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

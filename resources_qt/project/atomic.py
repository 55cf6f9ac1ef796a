"""Atomic file writes: temporary file, fsync, rename, fsync of the folder; for projects, exports and recovery."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
import tempfile
from pathlib import Path

from resources_qt.project.model import ProjectError

__all__ = ["write_atomic"]

logger = logging.getLogger(__name__)

_TEMP_SUFFIX = ".tmp"


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, mode: int | None = None) -> Path:
    """Replace the file at `path` with `data` (text is written as UTF-8) so it is either old or new, never torn.

    The data goes to a temporary file beside the target, is fsynced, renamed
    over the target, and the folder is fsynced so the rename survives a power
    cut. Missing folders are created.

    - A symlink is written through: the file it points at is replaced and the
      link stays. A *dangling* link is refused (`ProjectError` naming the link
      and its target): following it would create a file somewhere the user
      never chose.
    - An existing file keeps its mode and, where the OS allows, its owner and
      group; `mode` overrides the mode (e.g. 0o600 for private files). A new
      file gets `mode` or the umask's default.
    - When the write fails the temporary file is removed and the old file is
      untouched. Temporary files of writers that were killed (and so could
      not clean up) are removed by the next write to the same file.

    Returns the real path written (the link's target for a symlink).

    Raises:
        ProjectError: `path` is a dangling symlink or a folder.
        OSError: the folder or the disk refused the write.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    link = Path(path)
    real = _real_target(link)
    real.parent.mkdir(parents=True, exist_ok=True)
    existing = _stat_or_none(real)
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise ProjectError("cannot save: the path is a folder", source=str(link))
    _sweep_stale_temporaries(real)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{real.name}.{os.getpid()}.", suffix=_TEMP_SUFFIX, dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            # mkstemp creates 0600; give the file the mode it had (or asked for) before anyone can see it.
            os.fchmod(handle.fileno(), _mode_for(existing, mode))
            if existing is not None:
                _keep_owner(handle.fileno(), existing, real)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, real)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_dir(real.parent)
    return real


def _real_target(link: Path) -> Path:
    real = Path(os.path.realpath(link))
    if os.path.islink(link) and not real.exists():
        raise ProjectError(
            f"cannot save through the symlink: it points at {str(real)!r}, which does not exist "
            "(save to the link's target folder, or fix the link)",
            source=str(link),
        )
    return real


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _mode_for(existing: os.stat_result | None, mode: int | None) -> int:
    if mode is not None:
        return mode
    if existing is not None:
        return stat.S_IMODE(existing.st_mode)
    return 0o666 & ~_umask()


def _umask() -> int:
    # Reading the umask with os.umask() would briefly change it for every thread.
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def _keep_owner(fd: int, existing: os.stat_result, real: Path) -> None:
    if (existing.st_uid, existing.st_gid) == (os.geteuid(), os.getegid()):
        return
    try:
        os.fchown(fd, existing.st_uid, existing.st_gid)
    except OSError as exc:
        # Only root may give a file away; the saved file then belongs to whoever saved it.
        logger.warning(
            "Cannot keep the owner of %r (uid %d, gid %d): %s", str(real), existing.st_uid, existing.st_gid, exc
        )


def _sweep_stale_temporaries(real: Path) -> None:
    """Remove temporary files of earlier writers to `real` whose process is gone (killed mid-save)."""
    pattern = re.compile(rf"^\.{re.escape(real.name)}\.(\d+)\.[^.]+{re.escape(_TEMP_SUFFIX)}$")
    try:
        entries = list(os.scandir(real.parent))
    except OSError:
        return
    for entry in entries:
        found = pattern.match(entry.name)
        if found is None or int(found.group(1)) == os.getpid() or _alive(int(found.group(1))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            logger.info("Removed %r, left by a save that was interrupted", entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        # Someone else's live process.
        return True
    return True


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

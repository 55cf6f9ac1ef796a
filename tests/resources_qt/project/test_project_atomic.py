"""write_atomic: symlinks, modes and owners, failures that leave nothing behind, temporaries of killed saves."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from resources_qt.project import ProjectError, load_project, loads_project, save_project, write_atomic

REPO = Path(__file__).resolve().parents[3]
TEXT = 'format = 1\n\n[server]\nname = "x"\n'


def test_writes_text_or_bytes_and_creates_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.txt"
    assert write_atomic(target, "Zoë\n") == target
    assert target.read_bytes() == "Zoë\n".encode()
    write_atomic(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.txt"]


def test_a_new_file_gets_the_requested_mode_and_an_existing_one_keeps_its_own(tmp_path: Path) -> None:
    private = tmp_path / "private.json"
    write_atomic(private, "{}", mode=0o600)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    shared = tmp_path / "shared.toml"
    shared.write_text("old", encoding="utf-8")
    shared.chmod(0o664)
    write_atomic(shared, "new")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o664
    write_atomic(shared, "newer", mode=0o640)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_an_existing_file_keeps_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "owned.toml"
    path.write_text(TEXT, encoding="utf-8")
    os.chown(path, 4321, 4322)
    project = load_project(path)
    project.server.name = "y"
    save_project(project)
    info = path.stat()
    assert (info.st_uid, info.st_gid) == (4321, 4322)
    assert load_project(path).server.name == "y"


def test_a_dangling_symlink_is_refused_and_its_target_not_created(tmp_path: Path) -> None:
    link = tmp_path / "link.toml"
    missing = tmp_path / "elsewhere" / "missing.toml"
    link.symlink_to(missing)
    with pytest.raises(ProjectError, match=r"points at .*missing\.toml.*which does not exist") as caught:
        save_project(loads_project(TEXT), link)
    assert caught.value.source == str(link)
    assert not missing.exists() and not missing.parent.exists()
    assert link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.toml"]


def test_a_symlink_to_a_file_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    assert write_atomic(link, TEXT) == real
    assert link.is_symlink() and real.read_text(encoding="utf-8") == TEXT


def test_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(ProjectError, match="is a folder"):
        write_atomic(tmp_path / "dir.toml", TEXT)


def test_a_failed_write_removes_its_temporary_and_keeps_the_old_file(tmp_path: Path) -> None:
    # A real failure half-way: the kernel refuses the write past a file-size limit (EFBIG),
    # in a child process so the limit binds nothing else.
    path = tmp_path / "export.jsonl"
    path.write_text("old\n", encoding="utf-8")
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from resources_qt.project import write_atomic
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            write_atomic({str(path)!r}, b"x" * 100_000)
        except OSError as exc:
            print("refused", exc.errno)
            sys.exit(0)
        sys.exit("the oversized write did not fail")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("refused")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["export.jsonl"]


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    return child.pid


def test_temporaries_left_by_killed_writers_are_swept_by_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    dead = tmp_path / f".p.toml.{_dead_pid()}.abc123.tmp"
    dead.write_text("half a project", encoding="utf-8")
    live = tmp_path / f".p.toml.{os.getppid()}.def456.tmp"  # a writer that is still running
    live.write_text("being written", encoding="utf-8")
    other = tmp_path / ".q.toml.1.x.tmp"  # another file's temporary is not ours to judge
    other.write_text("", encoding="utf-8")
    write_atomic(path, TEXT)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["p.toml", live.name, other.name])

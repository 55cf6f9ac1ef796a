"""The snippet-output writer: a sink nobody drains never holds the caller; fields escaped; the file capped."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resources_qt.server.output_writer import OutputFile, OutputFileError, OutputWriter, escape_field, unescape_field
from resources_qt.snippets import SnippetOutput


def _output(number: int, *, size: int = 10_000) -> SnippetOutput:
    return SnippetOutput("r", f"t://{number}", 0.0, (("stdout", f"{number} " + "x" * size + "\n"),))


def test_a_sink_nobody_drains_never_holds_the_caller_and_drops_are_counted() -> None:
    read_fd, write_fd = os.pipe()
    sink = open(write_fd, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    writer = OutputWriter(sink, max_pending=4)
    # Like a server loop delivering reads' output while the launching client ignores stderr: the pipe
    # (64 KB) fills after a few blocks, then the queue; every further call must still return at once.
    def deliver() -> None:
        for number in range(40):
            writer(_output(number))

    caller = threading.Thread(target=deliver)
    caller.start()
    caller.join(30)
    assert not caller.is_alive(), "a listener call waited on the sink"
    assert writer.dropped > 0
    received = bytearray()
    reader = threading.Thread(target=lambda: received.extend(_read_all(read_fd)))
    reader.start()
    writer.close()
    sink.close()
    reader.join(30)
    lines = received.decode().splitlines()
    written = [line for line in lines if line.startswith("[r t://")]
    assert len(written) + writer.dropped == 40
    reports = [line for line in lines if line.startswith("[snippet output] ")]
    assert sum(int(line.split()[2]) for line in reports) == writer.dropped
    assert all(line.endswith(" reads' output dropped: the sink did not keep up") for line in reports)
    assert all(line.startswith("[r t://") and line.endswith("x") for line in written)


def _read_all(fd: int) -> bytes:
    chunks = []
    while data := os.read(fd, 65536):
        chunks.append(data)
    os.close(fd)
    return b"".join(chunks)


def test_lines_are_escaped_and_tagged_with_the_resource() -> None:
    sink = io.StringIO()
    writer = OutputWriter(sink)
    writer(SnippetOutput("r", "t://x", 0.0, (("stdout", "one\n\x1b[31mtwo"), ("stderr", "three\n"))))
    writer.close()
    assert sink.getvalue().splitlines() == [
        "[r t://x] stdout: one",
        "[r t://x] stdout: \\x1b[31mtwo",
        "[r t://x] stderr: three",
    ]


def test_a_pending_bound_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_pending"):
        OutputWriter(io.StringIO(), max_pending=0)


@given(st.text(max_size=60))
def test_fields_escape_reversibly_to_one_line_no_shell_acts_on(text: str) -> None:
    for where in (False, True):
        escaped = escape_field(text, where=where)
        assert unescape_field(escaped) == text
        assert escaped.splitlines() in ([], [escaped]) and not set(escaped) & set("$`;&|<>")
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in escaped)
        if where:
            assert " " not in escaped and "]" not in escaped


def test_the_file_moves_to_file_1_at_its_cap_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "snippets.log"
    path.write_text("[r t://old] stdout: from an earlier run\n", encoding="utf-8")
    sink = OutputFile(str(path), max_bytes=4096)
    writer = OutputWriter(sink, max_pending=1000)
    for number in range(300):
        writer(SnippetOutput("r", f"t://{number}", 0.0, (("stdout", f"line {number:04d} " + "x" * 40 + "\n"),)))
    writer.close()
    sink.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snippets.log", "snippets.log.1"]
    current = path.read_text(encoding="utf-8").splitlines()
    previous = Path(f"{path}.1").read_text(encoding="utf-8").splitlines()
    assert path.stat().st_size <= 4096 and Path(f"{path}.1").stat().st_size <= 4096
    assert current[0] == f"[snippet output] continued from {path}.1, which reached the 4096 bytes cap"
    assert previous[-1] == (f"[snippet output] this file reached the 4096 bytes cap: it is now {path}.1, "
                            f"and output continues in {path}")
    # The newest output is all there, in order, across the two files.
    numbers = [int(line.split()[4]) for line in previous + current if line.startswith("[r t://")
               and "old" not in line]
    assert numbers == list(range(numbers[0], 300))
    assert sink.rotations > 1
    rotated = [r for r in caplog.records if "reached the 4096 bytes cap" in r.getMessage()]
    assert len(rotated) == sink.rotations and all(r.levelname == "WARNING" for r in rotated)


def test_a_link_or_a_special_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "target"
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(OutputFileError, match="symbolic link"):
        OutputFile(str(link))
    assert not target.exists()
    with pytest.raises(OutputFileError, match="directory"):
        OutputFile(str(tmp_path))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OutputFileError, match="not a regular file"):
        OutputFile(str(fifo))
    with pytest.raises(ValueError, match="max_bytes"):
        OutputFile(str(tmp_path / "small"), max_bytes=100)

"""The serve command's snippet-output writer: a sink nobody drains never holds the caller; drops are counted."""

from __future__ import annotations

import io
import os
import threading

import pytest

from resources_qt.server.output_writer import OutputWriter
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

"""Run a command, pass stdin and stdout through, and keep a copy of every byte it wrote to stdout.

Usage: python stdio_tee.py RECORD_FILE COMMAND...  (the tests use it to inspect a stdio server's raw output)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading


def main() -> int:
    record, command = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None

    def pump_in() -> None:
        stdin = child.stdin
        assert stdin is not None
        try:
            while data := os.read(0, 65536):
                stdin.write(data)
                stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        finally:
            with contextlib.suppress(BrokenPipeError):
                stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    with open(record, "wb") as copy:
        while chunk := child.stdout.read1(65536):
            copy.write(chunk)
            copy.flush()
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
    return child.wait()


if __name__ == "__main__":
    raise SystemExit(main())

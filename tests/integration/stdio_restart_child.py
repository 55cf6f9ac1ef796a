"""Starts and stops a stdio server twice while its client keeps stdin open (spawned by a stdio test)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_support import build_catalogue

from resources_qt.server import ResourceServer


def main() -> None:
    wire = os.fstat(0)
    server = ResourceServer(build_catalogue(), name="stdio-restart", version="1")
    for attempt in (1, 2):
        server.start_stdio()
        assert server.is_running
        server.stop()
        assert not server.is_running and not server.is_stopping, f"attempt {attempt}: still stopping"
        # The wire is back on fd 0 and fd 1 once the server has stopped.
        assert (os.fstat(0).st_ino, os.fstat(0).st_dev) == (wire.st_ino, wire.st_dev)
        print(f"stopped {attempt}", flush=True)


if __name__ == "__main__":
    main()

"""A headless stdio server with live data over the project named on the command line (what `serve` will run)."""

from __future__ import annotations

import sys
from pathlib import Path

from resources_qt.live import LiveData
from resources_qt.project import load_project
from resources_qt.server.factory import build_server
from resources_qt.snippets import bind_project, create_pool


def main() -> None:
    project = load_project(Path(sys.argv[1]))
    pool = create_pool(project)
    pool.start()
    server = build_server(project, bind_project(project, pool))
    live = LiveData(server, project, pool)
    live.start()
    try:
        if not live.wait_ready(10):
            raise SystemExit("the file watcher did not start")
        server.serve_stdio()
    finally:
        live.close()
        server.close()
        pool.close()


if __name__ == "__main__":
    main()

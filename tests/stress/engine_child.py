"""Server process for the load test: a project served with snippet readers, driven by stdin commands.

`python engine_child.py PROJECT` prints `url URL`, then answers one line per command:
`notify URI` -> `sent URI RECIPIENTS`; `sessions` -> `sessions COUNT SUBSCRIBED_URIS`; `quit` ends it.
"""

from __future__ import annotations

import asyncio
import sys
import threading

from resources_qt.notifications import Updated
from resources_qt.project import load_project
from resources_qt.server import NotificationSent, ResourceServer, ServerEvent
from resources_qt.snippets import SnippetPool, bind_project


def main(path: str) -> None:
    project = load_project(path)
    pool = SnippetPool(workers=project.server.workers, timeout=project.server.reader_timeout)
    pool.start()
    server = ResourceServer(bind_project(project, pool), name=project.server.name, version="1")
    server.enable_resource_subscriptions = True
    server.enable_resource_notifications = True
    sent: dict[str, int] = {}
    done = threading.Condition()

    def observe(event: ServerEvent) -> None:
        if isinstance(event, NotificationSent) and event.uri:
            with done:
                sent[event.uri] = event.recipients
                done.notify_all()

    server.add_observer(observe)
    try:
        print(f"url {server.start_http('127.0.0.1', 0)}", flush=True)
        for line in sys.stdin:
            command, _, arg = line.strip().partition(" ")
            if command == "notify":
                with done:
                    sent.pop(arg, None)
                asyncio.run(server.notify(Updated(arg)))
                with done:
                    done.wait_for(lambda uri=arg: uri in sent, timeout=30)
                    print(f"sent {arg} {sent.get(arg, -1)}", flush=True)
            elif command == "sessions":
                print(f"sessions {len(server.sessions())} {len(server.subscribed_uris())}", flush=True)
            elif command == "quit":
                break
    finally:
        server.close()
        pool.close()


if __name__ == "__main__":
    main(sys.argv[1])

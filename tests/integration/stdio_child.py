"""A headless stdio server over the shared test catalogue (spawned by the stdio end-to-end tests)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_support import build_catalogue

from resources_qt.server import ResourceServer


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    print("this goes to stdout before serving and must not corrupt the protocol", file=sys.stderr)
    server = ResourceServer(build_catalogue(), name="stdio-e2e", version="1", page_size=4)
    server.enable_resource_notifications = "--notify" in sys.argv
    server.enable_resource_subscriptions = "--notify" in sys.argv
    server.serve_stdio()


if __name__ == "__main__":
    main()

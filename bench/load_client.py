"""Load generator process: `python -m bench.load_client URL CLIENTS SECONDS` reads the small resource."""

from __future__ import annotations

import asyncio
import json
import sys

from bench.read_http import _load


def main() -> None:
    url, clients, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    run = asyncio.run(_load(url, clients, seconds))
    print(json.dumps({"reads": run.reads, "errors": run.errors, "rps": run.rps, "p99_ms": run.p99}), flush=True)


if __name__ == "__main__":
    main()

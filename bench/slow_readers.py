"""The slow readers of the slow-reader bench: 1 ms of blocking and of awaited I/O, and an awaited 20 ms upstream
API call, for ours and the peers alike."""

from __future__ import annotations

import asyncio
import time

from bench.sdk_server import SMALL_TEXT

IO_SECONDS = 0.001
"""What each read waits: a fast database or cache round trip."""

API_SECONDS = 0.02
"""What the API reader awaits: a call to an upstream HTTP API, where concurrency, not CPU, sets the pace."""

SYNC_URI = "bench://slow-sync"
ASYNC_URI = "bench://slow-async"
API_URI = "bench://slow-api"

SYNC_READER = (f"import time\n\ndef read(uri, params):\n    time.sleep({IO_SECONDS})\n"
               f"    return {SMALL_TEXT!r}\n")


def _awaiting(seconds: float) -> str:
    """Our snippet that awaits `seconds`, then answers the peers' text."""
    return (f"import asyncio\n\nasync def read(uri, params):\n    await asyncio.sleep({seconds})\n"
            f"    return {SMALL_TEXT!r}\n")


ASYNC_READER = _awaiting(IO_SECONDS)
API_READER = _awaiting(API_SECONDS)
"""Our snippets; `sync_read`, `async_read` and `api_read` are the same readers as the peers declare them."""


def sync_read() -> str:
    time.sleep(IO_SECONDS)
    return SMALL_TEXT


async def async_read() -> str:
    await asyncio.sleep(IO_SECONDS)
    return SMALL_TEXT


async def api_read() -> str:
    await asyncio.sleep(API_SECONDS)
    return SMALL_TEXT

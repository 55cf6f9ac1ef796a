"""Looping listers for the instances stress test: `python instances_lister_child.py URL CLIENTS`.

Each of CLIENTS real SDK clients walks every page of resources/list, again and again. Prints `ready`
once every client has listed a page, and `pages N errors E ...` when stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import warnings

from mcp import Client


async def _walk_forever(client: Client, counts: list[int], index: int, listed: asyncio.Event) -> None:
    while True:
        cursor: str | None = None
        while True:
            page = await client.list_resources(cursor=cursor)
            counts[index] += 1
            if all(counts):
                listed.set()
            cursor = page.next_cursor
            if cursor is None:
                break


async def main(url: str, clients: int) -> None:
    counts = [0] * clients
    listed = asyncio.Event()
    loop = asyncio.get_running_loop()
    async with contextlib.AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(Client(url, mode="legacy", read_timeout_seconds=60))
                    for _ in range(clients)]
        tasks = [asyncio.create_task(_walk_forever(s, counts, i, listed)) for i, s in enumerate(sessions)]
        await listed.wait()
        print("ready", flush=True)
        await loop.run_in_executor(None, sys.stdin.read)  # until the test closes stdin
        for task in tasks:
            task.cancel()
        ended = await asyncio.gather(*tasks, return_exceptions=True)
        errors = [e for e in ended if not isinstance(e, asyncio.CancelledError)]
        # Before the clients close: the test needs nothing more.
        print(f"pages {sum(counts)} errors {len(errors)} {errors[:1]!r}", flush=True)


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # the SDK's deprecation notes for the handshake era
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))

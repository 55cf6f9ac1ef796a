"""Fan-out client process: N legacy sessions with open GET streams, all subscribed to one URI.

Usage: python bench/fanout_client.py URL N ROUNDS URI
Prints "ready" once every session is subscribed, then "round R MAX_RECEIVED_AT" (time.perf_counter,
CLOCK_MONOTONIC, comparable across processes on Linux) when all N sessions got the R-th update.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import httpx

from bench.rpc_client import RpcSession

UPDATED = "notifications/resources/updated"


async def main(url: str, count: int, rounds: int, uri: str) -> None:
    limits = httpx.Limits(max_connections=2 * count + 16, max_keepalive_connections=2 * count + 16)
    received: list[list[float]] = [[] for _ in range(rounds)]
    all_in = [asyncio.Event() for _ in range(rounds)]
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60.0, read=None)) as http:
        sessions = [RpcSession(http, url) for _ in range(count)]
        gate = asyncio.Semaphore(16)
        opened = [asyncio.Event() for _ in range(count)]

        async def listen(index: int, session: RpcSession) -> None:
            headers = session._headers()
            headers["accept"] = "text/event-stream"
            async with http.stream("GET", url, headers=headers) as response:
                opened[index].set()
                seen = 0
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    message = json.loads(line[5:])
                    if message.get("method") == UPDATED and seen < rounds:
                        received[seen].append(time.perf_counter())
                        if len(received[seen]) == count:
                            all_in[seen].set()
                        seen += 1

        async def open_one(index: int, session: RpcSession) -> asyncio.Task[None]:
            async with gate:
                await session.initialize(f"fanout-{index}")
                task = asyncio.create_task(listen(index, session))
                await asyncio.wait_for(opened[index].wait(), 30)
                await session.call("resources/subscribe", {"uri": uri})
                return task

        tasks = await asyncio.gather(*(open_one(i, s) for i, s in enumerate(sessions)))
        print("ready", flush=True)
        for r in range(rounds):
            await asyncio.wait_for(all_in[r].wait(), 120)
            print(f"round {r} {max(received[r])!r} {min(received[r])!r}", flush=True)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))

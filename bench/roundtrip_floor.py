"""The floor of a reader's process round trip: the leanest Python call to another process an asyncio loop can await.

A plain read pays one round trip to its worker process, which the SDK's
`MCPServer` (reader called in-process) does not. This measures what that
round trip costs at the very least on this machine, with nothing of ours in
it: the loop pickles a (uri, params) tuple onto a `multiprocessing` pipe
and waits for the answer with `add_reader`; the other process unpickles it,
calls a function returning a short text and pickles the answer back. No
output capture, no deadline, no module guard, no framing checks: every
real reader does more. `bench.read_wrk` sets it against the time the 1.5x
goal leaves for the round trip in the same run.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import struct
from multiprocessing.connection import Connection

from bench.common import median

_SIZE = struct.Struct("!i")


def _echo(conn: Connection) -> None:
    """The other process: answer each call until it is sent None."""

    def read(uri: str, params: dict[str, str]) -> dict[str, str]:
        return {"uri": uri, "mimeType": "text/plain", "text": "hello"}

    while True:
        call = pickle.loads(conn.recv_bytes())
        if call is None:
            return
        conn.send_bytes(pickle.dumps(read(*call), pickle.HIGHEST_PROTOCOL))


async def _round_trips(conn: Connection, count: int) -> list[float]:
    loop = asyncio.get_running_loop()
    fd = conn.fileno()
    buffer = bytearray()
    waiting: list[asyncio.Future[object]] = []

    def on_readable() -> None:
        buffer.extend(os.read(fd, 65536))
        if len(buffer) >= 4:
            (size,) = _SIZE.unpack_from(buffer)
            if len(buffer) >= 4 + size:
                answer = pickle.loads(bytes(buffer[4 : 4 + size]))
                del buffer[: 4 + size]
                waiting.pop().set_result(answer)

    loop.add_reader(fd, on_readable)
    times: list[float] = []
    try:
        for _ in range(count):
            started = loop.time()
            future: asyncio.Future[object] = loop.create_future()
            waiting.append(future)
            conn.send_bytes(pickle.dumps(("bench://small", {}), pickle.HIGHEST_PROTOCOL))
            await future
            times.append((loop.time() - started) * 1e6)
    finally:
        loop.remove_reader(fd)
    return times


def floor_us(count: int = 3000, *, one_cpu: bool = False) -> float:
    """Median microseconds of `count` round trips (after a warm-up), one at a time.

    `one_cpu`: both processes on this thread's first CPU (where the platform can pin), so no wake-up
    crosses CPUs; on a virtual machine a wake-up of an idle virtual CPU is the larger part of the floor.
    """
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if one_cpu and allowed:
        os.sched_setaffinity(0, {min(allowed)})  # this thread, and the process it starts inherits it
    try:
        return _measure(count)
    finally:
        if one_cpu and allowed:
            os.sched_setaffinity(0, allowed)


def _measure(count: int) -> float:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_echo, args=(child,), daemon=True)
    process.start()
    child.close()
    try:
        asyncio.run(_round_trips(parent, 200))
        return median(asyncio.run(_round_trips(parent, count)))
    finally:
        parent.send_bytes(pickle.dumps(None))
        process.join(5)
        if process.is_alive():
            process.kill()
        parent.close()


if __name__ == "__main__":
    print(f"process round trip floor: {floor_us():.0f} us; on one CPU: {floor_us(one_cpu=True):.0f} us")

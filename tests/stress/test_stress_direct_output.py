"""A snippet thread printing long lines across many direct and queued reads: every answer right, no line lost."""

from __future__ import annotations

import asyncio

from helpers.pools import MEMORY_MB
from helpers.waiting import eventually

from resources_qt.snippets import SnippetPool

LINES = 50

CHATTY = (
    "import threading, time\n"
    "def _chatter():\n"
    f"    for n in range({LINES}):\n"
    "        print('chatty-line', n, 'x' * 20_000)\n"
    "        time.sleep(0.02)\n"
    "def read(uri, params):\n"
    "    threading.Thread(target=_chatter, daemon=True).start()\n"
    "    return 'started'\n"
)
"""About a second of 20 KB lines (over multiprocessing's 16 KB two-write frame size), printed between and
after the reads that follow, so frames land after answers and across reads."""

ECHO = "def read(uri, params):\n    return uri\n"


def test_output_printed_across_direct_and_queued_reads_all_arrives(full: bool) -> None:
    reads = 2000 if full else 200
    seen: list[str] = []
    with SnippetPool(workers=1, timeout=10, memory_limit_mb=MEMORY_MB, output_limit=10_000_000) as pool:
        assert pool.wait_ready(60)
        pool.add_output_listener(lambda key, text: seen.append(text))

        def lines() -> int:
            return sum(text.count("chatty-line") for text in seen)

        async def main() -> None:
            first = await pool.read(key="chatty", source=CHATTY, uri="t://chatty", params={})
            assert first[0].text == "started"
            for number in range(reads):
                uri = f"t://{number}"
                if number % 2:
                    contents = await asyncio.wrap_future(
                        pool.submit_read(key="echo", source=ECHO, uri=uri, params={})
                    )
                else:
                    contents = await pool.read(key="echo", source=ECHO, uri=uri, params={})
                assert contents[0].text == uri

        asyncio.run(main())
        lent, queued = pool.call_counts()
        assert lent > 0 and queued > 0  # both paths took part

        def all_arrived() -> bool:
            # Output printed while the worker is idle waits in its pipe for the next call.
            assert asyncio.run(pool.read(key="echo", source=ECHO, uri="t://last", params={}))[0].text == "t://last"
            return lines() >= LINES

        eventually(all_arrived, 20, what=f"{LINES} chatty lines arriving")
        assert lines() == LINES

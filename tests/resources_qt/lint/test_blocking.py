"""The blocking-in-async check: blocking calls found in `async def` entries by what their imports bind."""

from __future__ import annotations

from resources_qt.lint.blocking import MAX_SOURCE_CHARS, blocking_calls


def test_blocking_calls_are_found_through_every_import_spelling() -> None:
    source = (
        "import time\nimport requests as r\nfrom subprocess import run\nimport urllib.request\n"
        "async def read(uri, params):\n"
        "    time.sleep(1)\n"
        "    r.get(uri)\n"
        "    run(['ls'])\n"
        "    return urllib.request.urlopen(uri).read()\n"
    )
    assert blocking_calls(source, "read") == [
        ("time.sleep", 6), ("requests.get", 7), ("subprocess.run", 8), ("urllib.request.urlopen", 9),
    ]


def test_awaited_calls_plain_defs_and_nested_helpers_are_left_alone() -> None:
    awaiting = (
        "import asyncio, time\nasync def read(uri, params):\n"
        "    def slow():\n        time.sleep(1)\n"
        "    await asyncio.to_thread(slow)\n    await asyncio.sleep(0.1)\n    return 'ok'\n"
    )
    assert blocking_calls(awaiting, "read") == []
    assert blocking_calls("import time\ndef read(uri, params):\n    time.sleep(1)\n", "read") == []
    redefined = "import time\nasync def read(uri, params):\n    time.sleep(1)\ndef read(uri, params):\n    pass\n"
    assert blocking_calls(redefined, "read") == []  # the last definition is the one that runs
    assert blocking_calls("import time\nasync def complete(n, v, c):\n    time.sleep(1)\n", "read") == []
    assert blocking_calls("async def read(:\n", "read") == []
    local = "async def read(uri, params):\n    session = make()\n    session.get(uri)\n"
    assert blocking_calls(local, "read") == []  # a method of a local object cannot be told from here


def test_a_source_past_the_budget_is_not_parsed() -> None:
    source = "import time\nasync def read(uri, params):\n    time.sleep(1)\n"
    assert blocking_calls(source + "#" * MAX_SOURCE_CHARS, "read") == []

"""Each way a snippet misbehaves gives its own -32000 message and leaves the pool healthy."""

from __future__ import annotations

import pytest
from helpers.pools import MEMORY_MB, TIMEOUT
from snippet_support import healthy, read

from resources_qt.errors import OPERATION_FAILED, ReaderFailedError
from resources_qt.snippets import SnippetPool

CASES = {
    "infinite loop": (
        "def read(uri, params):\n    while True:\n        pass\n",
        "timeout",
        f"Resource reader for URI t://x timed out after {TIMEOUT:g} s",
    ),
    "os._exit": (
        "import os\ndef read(uri, params):\n    os._exit(7)\n",
        "exited",
        "made its worker process exit (exit code 7)",
    ),
    "segfault": (
        "import ctypes\ndef read(uri, params):\n    return ctypes.string_at(0)\n",
        "crashed",
        "crashed its worker process (signal SIGSEGV",
    ),
    "memory hog": (
        "def read(uri, params):\n    hoard = []\n    while True:\n        hoard.append(bytearray(2**20))\n",
        "memory",
        f"exceeded the memory limit of {MEMORY_MB} MiB",
    ),
    "one huge allocation": (
        "def read(uri, params):\n    return bytes(2**40)\n",
        "memory",
        f"exceeded the memory limit of {MEMORY_MB} MiB",
    ),
    "sys.exit": (
        "import sys\ndef read(uri, params):\n    sys.exit(3)\n",
        "exit",
        "Resource reader for URI t://x called sys.exit(3)",
    ),
    "returns None": (
        "def read(uri, params):\n    return None\n",
        "result",
        "Resource reader returned None for URI: t://x",
    ),
    "returns nothing usable": (
        "def read(uri, params):\n    return object()\n",
        "result",
        "Resource reader returned object, which is not text, bytes, content or JSON-able data",
    ),
    "raises": (
        "def read(uri, params):\n    ticket = uri.split('/')[-1]\n    raise LookupError(f'No ticket {ticket}')\n",
        "raised",
        "Resource reader failed for URI t://x: LookupError: No ticket x (line 3)",
    ),
    "raises while loading": (
        "CONFIG = {}['missing']\ndef read(uri, params):\n    return 'x'\n",
        "raised",
        "Resource reader failed for URI t://x: KeyError: 'missing' (line 1), while loading the snippet",
    ),
    "syntax error": (
        "def read(uri, params):\n    return 'a' +\n",
        "syntax",
        "Resource reader for URI t://x does not compile: SyntaxError: invalid syntax (line 2, column 17)",
    ),
    "no read function": (
        "def reed(uri, params):\n    return 'x'\n",
        "no-entry",
        "the snippet defines no read(uri, params) function",
    ),
}

REPLACED = {"timeout", "exited", "crashed", "memory"}


@pytest.mark.parametrize("case", list(CASES))
def test_misbehaviour_is_reported_and_the_pool_recovers(pool: SnippetPool, case: str) -> None:
    source, reason, message = CASES[case]
    assert healthy(pool)
    before = set(pool.worker_pids())
    with pytest.raises(ReaderFailedError) as caught:
        read(pool, source)
    error = caught.value
    assert error.code == OPERATION_FAILED
    assert message in error.message
    assert error.data == {"reason": reason, "snippet": "t", "uri": "t://x"}
    if reason in REPLACED:
        assert "replaced" in error.message
    assert healthy(pool)
    assert healthy(pool)
    if reason in REPLACED:
        assert set(pool.worker_pids()) != before
    else:
        assert set(pool.worker_pids()) == before


def test_broken_snippet_keeps_failing_the_same_way(pool: SnippetPool) -> None:
    source, _, message = CASES["syntax error"]
    for _ in range(3):
        with pytest.raises(ReaderFailedError) as caught:
            read(pool, source)
        assert message in caught.value.message


def test_prelude_errors_name_the_prelude(pool: SnippetPool) -> None:
    reader = "def read(uri, params):\n    return str(LIMIT)\n"
    pool.set_prelude("LIMIT = 3\nif LIMIT >\n")
    with pytest.raises(ReaderFailedError, match=r"the project prelude does not compile: SyntaxError: .*line 2"):
        read(pool, reader)
    pool.set_prelude("LIMIT = 3\nraise RuntimeError('no database')\n")
    with pytest.raises(ReaderFailedError, match=r"prelude raised RuntimeError: no database \(prelude line 2\)"):
        read(pool, reader)
    pool.set_prelude("LIMIT = 4\n")
    assert read(pool, reader)[0].text == "4"


def test_traceback_goes_to_the_output(pool: SnippetPool) -> None:
    seen: list[tuple[str, str]] = []
    pool.add_output_listener(lambda key, text: seen.append((key, text)))
    with pytest.raises(ReaderFailedError):
        read(pool, CASES["raises"][0], key="tickets")
    logged = "".join(text for key, text in seen if key == "tickets")
    assert 'File "<read tickets>", line 3, in read' in logged
    assert "LookupError: No ticket x" in logged
    assert "resources_qt" not in logged  # the worker's own frames are left out

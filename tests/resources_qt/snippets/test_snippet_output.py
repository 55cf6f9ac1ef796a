"""What snippets print is captured per key, bounded, and never reaches the parent's stdout or stdin."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from snippet_support import healthy, read_text

from resources_qt.snippets import SnippetPool
from resources_qt.snippets.pool import DEFAULT_OUTPUT_LIMIT

ROOT = Path(__file__).resolve().parents[3]

CHATTY = textwrap.dedent(
    """\
    import ctypes, os, sys
    def read(uri, params):
        print('python stdout')
        print('python stderr', file=sys.stderr)
        os.write(1, b'fd one\\n')
        os.write(2, b'fd two\\n')
        ctypes.CDLL(None).printf(b'libc printf\\n')
        return 'chatty'
    """
)


class Collector:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[str, str]] = []

    def __call__(self, key: str, text: str) -> None:
        with self.lock:
            self.items.append((key, text))

    def text(self, key: str) -> str:
        with self.lock:
            return "".join(text for k, text in self.items if k == key)


def test_every_kind_of_print_is_captured_under_its_key(pool: SnippetPool) -> None:
    collector = Collector()
    unsubscribe = pool.add_output_listener(collector)
    assert read_text(pool, CHATTY, key="chatty") == "chatty"
    printed = collector.text("chatty")
    for line in ("python stdout", "python stderr", "fd one", "fd two", "libc printf"):
        assert line in printed
    unsubscribe()
    assert read_text(pool, CHATTY, key="chatty") == "chatty"
    assert collector.text("chatty") == printed


def test_print_spam_is_bounded_and_the_pool_stays_healthy(pool: SnippetPool) -> None:
    collector = Collector()
    pool.add_output_listener(collector)
    spam = "import os\ndef read(uri, params):\n    for i in range(200000):\n        print('spam', i)\n" \
        "    os.write(1, b'x' * 100000)\n    return 'done'\n"
    assert read_text(pool, spam, key="spam") == "done"
    printed = collector.text("spam")
    assert printed.startswith("spam 0\nspam 1\n")
    assert len(printed.encode()) < DEFAULT_OUTPUT_LIMIT + 200
    assert "[output truncated:" in printed and "more bytes were dropped]" in printed
    assert healthy(pool)


def test_endless_printer_is_stopped_by_the_timeout(pool: SnippetPool) -> None:
    collector = Collector()
    pool.add_output_listener(collector)
    source = "def read(uri, params):\n    while True:\n        print('again and again')\n"
    future = pool.submit_read(key="endless", source=source, uri="t://x", params={})
    assert "timed out" in str(future.exception(30))
    assert 0 < len(collector.text("endless").encode()) < DEFAULT_OUTPUT_LIMIT + 200
    assert healthy(pool)


PARENT = textwrap.dedent(
    """\
    import os, sys
    from resources_qt.snippets import SnippetPool

    CHATTY = {chatty!r}
    STDIN_THIEF = (
        "import os, sys\\n"
        "def read(uri, params):\\n"
        "    return repr((os.read(0, 100), sys.stdin.read()))\\n"
    )

    if __name__ == "__main__":
        with SnippetPool(workers=2, timeout=10) as pool:
            for i in range(5):
                pool.submit_read(key="chatty", source=CHATTY, uri="t://x", params={{}}).result(30)
            stolen = pool.submit_read(key="thief", source=STDIN_THIEF, uri="t://x", params={{}}).result(30)
        sys.stderr.write("snippet saw " + stolen[0].text + "\\n")
        sys.stdout.write("parent stdin: " + sys.stdin.read() + "\\n")
        sys.stdout.flush()
    """
)


def test_parent_stdout_stays_clean_and_stdin_is_not_shared(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT.format(chatty=CHATTY), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, str(script)], input=b"protocol bytes", capture_output=True, env=env, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout == b"parent stdin: protocol bytes\n"
    assert b"snippet saw (b'', '')" in result.stderr
    for line in (b"python stdout", b"fd one", b"libc printf"):
        assert line not in result.stderr


def test_background_printer_does_not_block_answers(solo_pool: SnippetPool) -> None:
    source = textwrap.dedent(
        """\
        import threading
        def spam():
            while True:
                print('from a thread that never stops')
        threading.Thread(target=spam, daemon=True).start()
        def read(uri, params):
            return 'answered'
        """
    )
    for _ in range(3):
        assert read_text(solo_pool, source, key="background") == "answered"
    assert healthy(solo_pool)

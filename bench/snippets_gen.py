"""Generated inputs for the GUI benchmarks: a long, varied reader snippet and a big JSON reader."""

from __future__ import annotations

_BLOCK = [
    "def helper_{n}(value, *, scale=1.5):",
    '    """Scale a value; the docstring keeps the highlighter busy ({n})."""',
    "    # comments, numbers and strings on every few lines",
    "    total = value * scale + 0x{n:x} - 3.25e-2",
    "    label = f\"item-{{value}}-{n}\" if value else 'none'",
    "    for i in range({n} % 7 + 1):",
    "        total += i ** 2  # a loop",
    "    return {{'label': label, 'total': total, 'ok': True, 'n': None}}",
    "",
    "",
]


def long_reader(lines: int = 2000) -> str:
    """A valid reader snippet of exactly `lines` lines."""
    body: list[str] = []
    n = 0
    while len(body) < lines - 2:
        body.extend(line.format(n=n) for line in _BLOCK)
        n += 1
    body = body[: lines - 2]
    body += ["def read(uri, params):", "    return helper_1(2)['label']"]
    return "\n".join(body) + "\n"


def big_json_reader(megabytes: float = 10.0) -> str:
    """A reader returning about `megabytes` MB of JSON text (built in the worker, not in the file)."""
    items = int(megabytes * 1_000_000 / 86.7)  # about 86.7 bytes of JSON per row
    return (
        "import json\n"
        "def read(uri, params):\n"
        f"    rows = [{{'id': i, 'name': 'row %06d' % i, 'tags': ['a', 'b'], 'score': i * 0.5, 'ok': True}}"
        f" for i in range({items})]\n"
        "    return json.dumps(rows)\n"
    )

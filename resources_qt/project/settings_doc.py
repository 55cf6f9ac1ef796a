"""The README's `[server]` settings table, generated from `settings_table.SETTINGS` (`python -m` prints it)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from resources_qt.project.settings_table import CACHE_TTL_MAX_MS, SETTINGS, Setting

__all__ = ["BEGIN", "END", "markdown_table", "replace_in"]

BEGIN = "<!-- server-settings: generated from resources_qt/project/settings_table.py -->"
END = "<!-- /server-settings -->"


def markdown_table() -> str:
    """One row per key: default, range, when it applies, what it does."""
    lines = ["| key | default | range | applies | meaning |", "|---|---|---|---|---|"]
    for row in SETTINGS:
        applies = "at once" if row.live else "at the next start"
        lines.append(f"| `{row.key}` | {_default(row)} | {_range(row)} | {applies} | {_meaning(row)} |")
    return "\n".join(lines)


def replace_in(text: str) -> str:
    """`text` (the README) with its generated block replaced by the current table."""
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"the README has no generated settings block ({BEGIN} ... {END})")
    return pattern.sub(lambda _: f"{BEGIN}\n{markdown_table()}\n{END}", text)


def _default(row: Setting) -> str:
    value = row.default
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"' if value else '""'
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _range(row: Setting) -> str:
    if row.choices:
        return " or ".join(f'"{choice}"' for choice in row.choices)
    if row.least is None or row.most is None:
        return ""
    most = "one year" if row.most == CACHE_TTL_MAX_MS else _number(row.most)
    unit = f" {row.unit}" if row.unit and row.most != CACHE_TTL_MAX_MS else ""
    word = f'"{row.word}" or ' if row.word else ""
    return f"{word}{_number(row.least)} \u2013 {most}{unit}"  # an en dash, as the README writes ranges


def _number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,g}"


def _meaning(row: Setting) -> str:
    return row.help.replace("|", "\\|")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write"] and len(sys.argv) == 3:
        readme = Path(sys.argv[2])
        readme.write_text(replace_in(readme.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(markdown_table())

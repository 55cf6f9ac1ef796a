"""The README's rules table lists every lint rule with its level, in the order SARIF's driver gives them."""

from __future__ import annotations

import re
from pathlib import Path

from resources_qt.lint.rules import RULES

README = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")


def test_the_readme_table_is_the_rules() -> None:
    found = re.search(r"<!-- lint-rules:.*?-->\n(.*?)<!-- /lint-rules -->", README, re.DOTALL)
    assert found is not None
    rows = [line for line in found.group(1).splitlines() if line.startswith("| `")]
    listed = [tuple(cell.strip().strip("`") for cell in row.strip("|").split("|")[:2]) for row in rows]
    assert listed == [(rule.id, rule.level) for rule in RULES]

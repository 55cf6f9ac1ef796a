"""The README's promises: two commands on top, CI running the second, a library example that runs."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _first_block() -> list[str]:
    found = re.search(r"```bash\n(.*?)```", README, re.DOTALL)
    assert found is not None
    return [line for line in found.group(1).splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_commands() -> None:
    assert README.index("```bash") < README.index("\n## ")
    install_and_launch, install_and_test = _first_block()
    assert install_and_launch.endswith("resource-studio")
    assert "pip install -e ." in install_and_launch
    assert "'.[test]'" in install_and_test and "pytest" in install_and_test


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _first_block()[1] in ci.splitlines()


def test_library_example_runs() -> None:
    found = re.search(r"## The library.*?```python\n(.*?)```", README, re.DOTALL)
    assert found is not None
    # Port 0: the example's fixed port may be taken on a shared machine.
    code = found.group(1).replace("port=8765", "port=0")
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    match = namespace["match"]
    contents = asyncio.run(match.resource.read("kb://articles/billing/refunds", match.params))  # type: ignore[attr-defined]
    assert contents[0].text == "# refunds"
    assert contents[0].mime_type == "text/markdown"

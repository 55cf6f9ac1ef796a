"""The package list in pyproject.toml names every package, so a non-editable install has all of them."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_with_an_init_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("resources_qt", "studio")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found - listed == set()

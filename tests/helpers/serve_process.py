"""A real `resource-studio serve` process for tests: its stderr lines, its URLs, and a real scrape of /metrics."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from helpers.waiting import eventually

__all__ = ["ROOT", "Scrape", "ServeProcess", "scrape", "serve_env"]

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0


def serve_env(extra: Mapping[str, str] | None = None, *, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment a serve process runs in: this checkout first on its path, OTEL_* cleared unless given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k not in drop}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


class ServeProcess:
    """`python -m studio serve PROJECT ARGS...`, its stderr read on a thread; `stop()` ends it with SIGTERM."""

    def __init__(self, project: Path, *args: str, env: Mapping[str, str] | None = None) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "studio", "serve", str(project), *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env=dict(env) if env is not None else serve_env(), cwd=ROOT,
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def url(self, pattern: str, timeout: float = START_TIMEOUT) -> str:
        """The first URL of a stderr line matching `pattern` (a regex with one group), once it is printed."""
        found: list[str] = []

        def printed() -> bool:
            if self.process.poll() is not None and not self._reader.is_alive():
                raise AssertionError(f"serve exited with {self.process.returncode}: {self.lines}")
            for line in list(self.lines):
                match = re.search(pattern, line)
                if match:
                    found.append(match.group(1))
                    return True
            return False

        eventually(printed, timeout, what=f"a line matching {pattern!r}")
        return found[0]

    @property
    def mcp_url(self) -> str:
        return self.url(r"Serving .* at (http://\S+/mcp)")

    @property
    def metrics_url(self) -> str:
        return self.url(r"Metrics at (http://\S+/metrics)")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        code = self.process.wait(30)
        self._reader.join(10)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return code

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


Scrape = dict[tuple[str, frozenset[tuple[str, str]]], float]
"""(sample name, its labels) -> value."""


def scrape(url: str) -> Scrape:
    """GET /metrics and parse it with prometheus_client's own parser."""
    response = httpx.get(url, timeout=10)
    response.raise_for_status()
    samples: Scrape = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Scrape, name: str, **labels: str) -> float:
    """The sample `name{labels}`, 0 when it is absent (a labelled counter has no series before its first count)."""
    return samples.get((name, frozenset(labels.items())), 0.0)

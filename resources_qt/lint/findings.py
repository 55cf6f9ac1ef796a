"""What lint found: one finding per problem, with its rule, level, resource, place and a fix when one is certain."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = [
    "LEVELS",
    "Finding",
    "Fix",
    "Level",
    "LintReport",
    "counts",
    "exit_status",
    "merge_eras",
    "sort_findings",
    "summary_line",
]

Level = Literal["error", "warning", "note"]
LEVELS: tuple[Level, ...] = ("error", "warning", "note")
"""Most severe first; SARIF's `level` values too."""

EXIT_CLEAN, EXIT_FINDINGS = 0, 1


@dataclass(frozen=True)
class Fix:
    """A fix that is certain: set the resource's `field` to `value` (`label` says it to a person)."""

    field: str
    value: str | int
    label: str


@dataclass(frozen=True)
class Finding:
    """One problem: `rule` is the stable id (`size-mismatch`), `resource` the `[[resources]]` entry it is about.

    `line` is the line of that entry's `[[resources]]` header in the file (None when the project has no file
    or the entry could not be placed); `field` the resource key at fault, for an editor to select.
    """

    rule: str
    level: Level
    message: str
    resource: str | None = None
    uri: str | None = None
    field: str | None = None
    line: int | None = None
    fix: Fix | None = None
    eras: tuple[str, ...] = ()
    """The protocol eras it was seen in (empty for checks that read nothing)."""

    @property
    def key(self) -> tuple[str, str | None, str | None, str | None, str]:
        """What makes two findings the same one (seen in two eras, say)."""
        return self.rule, self.resource, self.uri, self.field, self.message


@dataclass(frozen=True)
class LintReport:
    """Every finding of one lint run, most severe first, then in file order; `source` is the project file."""

    findings: tuple[Finding, ...]
    source: str = ""
    reads: int = 0
    """How many reads were made (samples and listed instances, in every era)."""
    notes: tuple[str, ...] = field(default=())
    """What the run left out and why (instances past the bound, resources with errors), one line each."""

    def at_least(self, level: Level) -> list[Finding]:
        """The findings of `level` or more severe."""
        wanted = LEVELS[: LEVELS.index(level) + 1]
        return [finding for finding in self.findings if finding.level in wanted]

    def of_resource(self, name: str) -> list[Finding]:
        return [finding for finding in self.findings if finding.resource == name]


def _order(finding: Finding) -> tuple[int, int, str, str]:
    return LEVELS.index(finding.level), finding.line or 0, finding.rule, finding.uri or ""


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Most severe first, then by line and rule: a stable order for text, JSON and SARIF alike."""
    return tuple(sorted(findings, key=_order))


def merge_eras(per_era: Sequence[tuple[str, Sequence[Finding]]]) -> list[Finding]:
    """One finding per `Finding.key` across the eras, carrying every era it was seen in (first seen order)."""
    merged: dict[tuple[str, str | None, str | None, str | None, str], Finding] = {}
    for era, findings in per_era:
        for finding in findings:
            seen = merged.get(finding.key)
            if seen is None:
                merged[finding.key] = replace(finding, eras=(era,))
            elif era not in seen.eras:
                merged[finding.key] = replace(seen, eras=(*seen.eras, era))
    return list(merged.values())


def counts(findings: Iterable[Finding]) -> dict[Level, int]:
    tally: dict[Level, int] = dict.fromkeys(LEVELS, 0)
    for finding in findings:
        tally[finding.level] += 1
    return tally


def summary_line(findings: Iterable[Finding]) -> str:
    """`1 error, 2 warnings, 0 notes`."""
    tally = counts(findings)
    return ", ".join(f"{count} {level}{'' if count == 1 else 's'}" for level, count in tally.items())


def exit_status(findings: Iterable[Finding]) -> int:
    """0 when nothing is at warning or error, 1 when something is."""
    return EXIT_FINDINGS if any(finding.level != "note" for finding in findings) else EXIT_CLEAN

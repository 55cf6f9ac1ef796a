"""SARIF 2.1.0 for code scanning: the rules as the tool's driver, each finding a result at its file and line."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path, PurePath
from typing import Any

from resources_qt import __version__
from resources_qt.lint.findings import LintReport
from resources_qt.lint.rules import RULES

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "TOOL_NAME", "artifact_uri", "to_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "resource-studio lint"
_SRCROOT = "%SRCROOT%"


def artifact_uri(source: str, *, root: Path | None = None) -> tuple[str, str | None]:
    """The project file as SARIF names it: (uri, uriBaseId).

    Relative to `root` (the working folder) when it lies below it, so code scanning finds it in the
    checkout; otherwise an absolute `file:` URI with no base.
    """
    if not source:
        return "project.toml", _SRCROOT
    path = Path(source)
    base = (root or Path.cwd()).resolve()
    full = path if path.is_absolute() else base / path
    try:
        relative = Path(os.path.normpath(full)).relative_to(base)
    except ValueError:
        return Path(os.path.normpath(full)).as_uri(), None
    return PurePath(relative).as_posix(), _SRCROOT


def to_sarif(report: LintReport, *, root: Path | None = None) -> dict[str, Any]:
    """The report as one SARIF log with one run (JSON-ready)."""
    uri, base_id = artifact_uri(report.source, root=root)
    index = {rule.id: number for number, rule in enumerate(RULES)}
    rules = [
        {
            "id": rule.id,
            "name": "".join(part.capitalize() for part in rule.id.split("-")),
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": rule.help},
            "help": {"text": rule.help, "markdown": f"**{rule.title}.** {rule.help}"},
            "defaultConfiguration": {"level": rule.level},
        }
        for rule in RULES
    ]
    location: dict[str, Any] = {"uri": uri}
    if base_id is not None:
        location["uriBaseId"] = base_id
    results = []
    for finding in report.findings:
        properties: dict[str, Any] = {}
        for key in ("resource", "uri", "field"):
            value = getattr(finding, key)
            if value is not None:
                properties[key] = value
        if finding.eras:
            properties["eras"] = list(finding.eras)
        # Numbers left out: a size that changes is still the same problem of the same resource.
        shape = re.sub(r"\d+", "#", finding.message)
        identity = "\x00".join((finding.rule, finding.resource or "", finding.uri or "", finding.field or "", shape))
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "ruleIndex": index[finding.rule],
            "level": finding.level,
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {"artifactLocation": dict(location),
                                                "region": {"startLine": finding.line or 1}}}],
            # Code scanning matches a result across runs by this, not by a line that moves with edits.
            "partialFingerprints": {"resourceStudioLint/v1": hashlib.sha256(identity.encode()).hexdigest()[:32]},
        }
        if properties:
            result["properties"] = properties
        results.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": {"name": TOOL_NAME, "version": __version__, "semanticVersion": __version__,
                            "rules": rules}},
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    if base_id is not None:
        run["originalUriBaseIds"] = {_SRCROOT: {"uri": (root or Path.cwd()).resolve().as_uri() + "/"}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}

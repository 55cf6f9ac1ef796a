"""Lint: what each resource declares (size, MIME type, URI, lastModified) against what it serves."""

from resources_qt.lint.findings import LEVELS, Finding, Fix, Level, LintReport
from resources_qt.lint.rules import RULES, Rule

__all__ = ["LEVELS", "RULES", "Finding", "Fix", "Level", "LintReport", "Rule"]

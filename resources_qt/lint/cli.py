"""`resource-studio lint PROJECT` (exit 0, 1 or 2) and `resource-studio schema`: the project file's JSON Schema."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from resources_qt.testing.eras import ERAS

if TYPE_CHECKING:
    from resources_qt.lint.findings import Finding, LintReport

__all__ = ["format_finding", "lint_main", "report_json", "schema_main"]

PROG = "resource-studio lint"
SCHEMA_PROG = "resource-studio schema"
EXIT_USAGE = 2
FORMATS = ("text", "json", "sarif")


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and an exception, so the caller decides the exit)."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, not {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Check what each resource declares (size, MIME type, URI, lastModified, discoverability) "
        "against what it serves: every sample and listed instance is read through the real server and SDK client.",
        epilog="Exit status: 0 nothing at warning or error, 1 a warning or error, 2 the project or the arguments "
        "are wrong.",
    )
    parser.add_argument("project", help="the project file (.toml)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="how to write the findings (default text)")
    parser.add_argument("--output", metavar="FILE", type=Path, help="write the findings to FILE instead of stdout")
    parser.add_argument("--era", choices=[*ERAS, "both"], default="legacy",
                        help="protocol era of the client (default legacy; both reads in each)")
    parser.add_argument("--max-instances", type=_count, default=None, metavar="N",
                        help="listed instances read per template (default 20)")
    parser.add_argument("--log-level", default="error", choices=["debug", "info", "warning", "error"],
                        help="stderr log level (default error: what lint finds is in its findings)")
    return parser


def lint_main(argv: Sequence[str]) -> int:
    """Lint the project as the command line says; returns the exit status."""
    try:
        args = build_parser().parse_args(list(argv))
    except _UsageError as exc:
        return _fail(PROG, str(exc))
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level.upper()),
                        format="%(levelname)s %(name)s: %(message)s")
    # Here, not at the top: run as `python -m`, this module is the snippet workers' preloaded __main__.
    from resources_qt.lint.findings import exit_status, summary_line
    from resources_qt.lint.runner import MAX_INSTANCES, RunError, lint_project, read_source
    from resources_qt.lint.sarif import to_sarif
    from resources_qt.project import ProjectError, load_project

    path = Path(args.project)
    try:
        project = load_project(path)
    except ProjectError as exc:
        return _fail(PROG, str(exc))
    eras = ERAS if args.era == "both" else (args.era,)
    max_instances = MAX_INSTANCES if args.max_instances is None else args.max_instances
    try:
        report = lint_project(project, source_text=read_source(path), eras=eras, max_instances=max_instances)
    except RunError as exc:
        return _fail(PROG, str(exc))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr, flush=True)
        return 130
    if args.format == "sarif":
        text = json.dumps(to_sarif(report), ensure_ascii=False, indent=2) + "\n"
    elif args.format == "json":
        text = json.dumps(report_json(report), ensure_ascii=False, indent=2) + "\n"
    else:
        lines = [format_finding(finding, source=str(path), eras=eras) for finding in report.findings]
        lines += [f"note: {note}" for note in report.notes]
        lines.append(summary_line(report.findings))
        text = "\n".join(lines) + "\n"
    try:
        _write(text, args.output)
    except OSError as exc:
        return _fail(PROG, f"cannot write {args.output}: {exc.strerror or exc}")
    return exit_status(report.findings)


def format_finding(finding: Finding, *, source: str, eras: Sequence[str] = ()) -> str:
    """`desk.toml:12: warning: resource 'x' declares size 10 bytes but serves 12 [size-mismatch]`.

    When several `eras` ran and the finding was seen in only some, the line says which.
    """
    where = f"{source}:{finding.line}" if finding.line is not None else source
    only = f" (in the {' and '.join(finding.eras)} era only)" if 0 < len(finding.eras) < len(eras) else ""
    return f"{where}: {finding.level}: {finding.message}{only} [{finding.rule}]"


def report_json(report: LintReport) -> dict[str, object]:
    """The report as one JSON document: the counts, then every finding with its place and fix."""
    from resources_qt.lint.findings import counts

    return {
        "source": report.source,
        "counts": counts(report.findings),
        "reads": report.reads,
        "notes": list(report.notes),
        "findings": [
            {
                "rule": finding.rule,
                "level": finding.level,
                "message": finding.message,
                "resource": finding.resource,
                "uri": finding.uri,
                "field": finding.field,
                "line": finding.line,
                "eras": list(finding.eras),
                "fix": None if finding.fix is None else
                {"field": finding.fix.field, "value": finding.fix.value, "label": finding.fix.label},
            }
            for finding in report.findings
        ],
    }


def build_schema_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=SCHEMA_PROG,
        description="Print the JSON Schema (draft 2020-12) of project files, generated from the project model, for "
        "editors with TOML schema support (Taplo / Even Better TOML).",
        epilog="Saved projects begin with '#:schema ./resource-studio.schema.json': write the schema there with "
        "--output next to them.",
    )
    parser.add_argument("--output", metavar="FILE", type=Path, help="write the schema to FILE instead of stdout")
    return parser


def schema_main(argv: Sequence[str]) -> int:
    """Print or write the project schema; returns the exit status."""
    try:
        args = build_schema_parser().parse_args(list(argv))
    except _UsageError as exc:
        return _fail(SCHEMA_PROG, str(exc))
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    from resources_qt.lint.schema import schema_text

    try:
        _write(schema_text(), args.output)
    except OSError as exc:
        return _fail(SCHEMA_PROG, f"cannot write {args.output}: {exc.strerror or exc}")
    return 0


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from resources_qt.project import write_atomic

    write_atomic(output, text)


def _fail(prog: str, message: str) -> int:
    print(f"{prog}: error: {' '.join(message.split())}", file=sys.stderr, flush=True)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(lint_main(sys.argv[1:]))

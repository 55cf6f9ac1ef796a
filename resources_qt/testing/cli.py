"""`resource-studio test PROJECT`: run a project's resource tests and samples for CI; exit 0, 1 or 2."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from resources_qt.testing.eras import ERAS

if TYPE_CHECKING:
    from resources_qt.testing.runner import TestResult
    from resources_qt.testing.snapshots import SnapshotStore

__all__ = ["build_parser", "format_result", "summary_line", "test_main"]

PROG = "resource-studio test"
EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
_LISTED = 5
"""Orphan snapshot files a note names (the rest are counted)."""


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and an exception, so test_main decides the exit)."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Run a project's [[tests]] and resource samples through the real server and SDK client.",
        epilog="Exit status: 0 all passed, 1 a test failed, 2 the project or the arguments are wrong.",
    )
    parser.add_argument("project", help="the project file (.toml)")
    parser.add_argument("--era", choices=[*ERAS, "both"], default="legacy",
                        help="protocol era of the client (default legacy; both runs every test in each)")
    parser.add_argument("--no-samples", action="store_true", help="run only [[tests]], not every resource's samples")
    parser.add_argument("-k", dest="pattern", metavar="PATTERN",
                        help="run the tests whose name contains PATTERN (case-insensitive; * ? [ make it a glob)")
    parser.add_argument("--update-snapshots", action="store_true",
                        help="record or refresh snapshot files, and delete those no test records")
    parser.add_argument("--junit", metavar="FILE", type=Path, help="also write JUnit XML to FILE")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON document")
    parser.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"],
                        help="stderr log level")
    return parser


def test_main(argv: Sequence[str]) -> int:
    """Run the tests as the command line says; returns the exit status."""
    try:
        args = build_parser().parse_args(list(argv))
    except _UsageError as exc:
        return _fail(str(exc))
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level.upper()),
                        format="%(levelname)s %(name)s: %(message)s")
    # Imported here, not at the top: run as `python -m`, this module is the snippet workers'
    # forkserver's preloaded __main__, and the server and client stacks have no business there.
    from resources_qt.project import ProjectError, load_project
    from resources_qt.testing.junit import write_junit
    from resources_qt.testing.runner import RunError, collect_tests, run_tests, select_tests
    from resources_qt.testing.snapshots import SnapshotStore, snapshot_dir_for

    try:
        project = load_project(args.project)
    except ProjectError as exc:
        return _fail(str(exc))
    eras = ERAS if args.era == "both" else (args.era,)
    with_era = len(eras) > 1
    cases = select_tests(collect_tests(project, project.tests, samples=not args.no_samples), args.pattern)
    if args.pattern and not cases:
        return _fail(f"no test matches -k {args.pattern!r}")
    out = sys.stdout

    def report(result: TestResult) -> None:
        if not args.json:
            print(format_result(result, with_era=with_era), file=out, flush=True)

    store = SnapshotStore(snapshot_dir_for(Path(args.project)))
    try:
        results = run_tests(
            project,
            cases,
            eras=eras,
            snapshots=store,
            update_snapshots=args.update_snapshots,
            on_result=report,
        )
    except RunError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr, flush=True)
        return 130
    if args.junit is not None:
        try:
            write_junit(args.junit, results, suite=project.server.name, with_era=with_era)
        except OSError as exc:
            return _fail(f"cannot write {args.junit}: {exc.strerror or exc}")
    orphans = [path.name for path in store.orphans(project.tests)]
    if args.json:
        _print_json(results, out=out, orphans=orphans)
    else:
        print(summary_line(results), file=out, flush=True)
    if orphans:
        _note_orphans(store, orphans, delete=args.update_snapshots)
    return EXIT_PASSED if all(result.passed for result in results) else EXIT_FAILED


test_main.__test__ = False  # type: ignore[attr-defined]  # a function named test_* is not a pytest test


def format_result(result: TestResult, *, with_era: bool) -> str:
    """`PASS  name  (1.2 ms)`, or FAIL with each failure indented below it."""
    status = "PASS" if result.passed else "FAIL"
    detail = f"{result.elapsed_ms:.1f} ms" + (f", {result.note}" if result.note else "")
    lines = [f"{status}  {result.label(with_era=with_era)}  ({detail})"]
    for failure in result.failures:
        lines.extend(f"      {line}" for line in failure.splitlines())
    return "\n".join(lines)


def summary_line(results: Sequence[TestResult]) -> str:
    passed = sum(1 for result in results if result.passed)
    return f"{passed} passed, {len(results) - passed} failed"


def _note_orphans(store: SnapshotStore, orphans: Sequence[str], *, delete: bool) -> None:
    """One note on stderr: snapshot files whose test is gone (deleted with --update-snapshots)."""
    where = store.directory
    listed = ", ".join(orphans[:_LISTED]) + (f" and {len(orphans) - _LISTED} more" if len(orphans) > _LISTED else "")
    count = f"{len(orphans)} snapshot file{'s' if len(orphans) != 1 else ''} in {where}"
    if not delete:
        has = "has" if len(orphans) == 1 else "have"
        print(f"note: {count} {has} no test: {listed} (--update-snapshots deletes them)", file=sys.stderr, flush=True)
        return
    problems = store.delete([where / name for name in orphans])
    print(f"note: deleted {count} with no test: {listed}", file=sys.stderr, flush=True)
    for problem in problems:
        print(f"note: cannot delete {problem}", file=sys.stderr, flush=True)


def _print_json(results: Sequence[TestResult], *, out: TextIO, orphans: Sequence[str] = ()) -> None:
    passed = sum(1 for result in results if result.passed)
    document = {
        "passed": passed,
        "failed": len(results) - passed,
        "orphan_snapshots": list(orphans),
        "tests": [
            {
                "name": result.name,
                "uri": result.uri,
                "era": result.era,
                "passed": result.passed,
                "elapsed_ms": round(result.elapsed_ms, 3),
                "resource": result.resource,
                "sample_of": result.sample_of,
                "failures": list(result.failures),
                "note": result.note,
            }
            for result in results
        ],
    }
    json.dump(document, out, ensure_ascii=False, indent=2)
    out.write("\n")
    out.flush()


def _fail(message: str) -> int:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr, flush=True)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(test_main(sys.argv[1:]))

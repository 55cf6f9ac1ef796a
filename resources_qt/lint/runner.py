"""Linting a project through the real serving path: its engine over HTTP, listed and read by the SDK client."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from resources_qt.collection import Resources
from resources_qt.errors import ValidationError
from resources_qt.lint.findings import Finding, LintReport, merge_eras, sort_findings
from resources_qt.lint.rules import ReadTarget, check_read, static_findings
from resources_qt.lint.watched import check_last_modified
from resources_qt.project import Project
from resources_qt.snippets import bind_project, create_pool
from resources_qt.snippets.binding import project_folder
from resources_qt.testing.eras import ERAS
from resources_qt.testing.observed import ObservedRead, from_sdk_contents
from resources_qt.testing.runner import CONCURRENT_READS, RunError, run_interruptibly

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client

__all__ = [
    "MAX_INSTANCES", "MAX_READS", "RunError", "lint_project", "lint_project_async", "read_source", "resource_lines",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

MAX_INSTANCES = 20
"""Listed instances read per template (the rest are named in the report's notes)."""
MAX_READS = 10_000
"""Reads per era at most, samples first."""
MAX_LIST_PAGES = 1_000
"""`resources/list` pages followed at most: a cursor that never ends must not keep a lint going."""
_WORKERS_READY_TIMEOUT = 30.0


@dataclass(frozen=True)
class _Listed:
    """What one era's `resources/list` showed: direct resources' entries by name, instances by template."""

    direct: dict[str, types.Resource]
    instances: dict[str, list[types.Resource]]


def lint_project(
    project: Project,
    *,
    source_text: str | None = None,
    eras: Sequence[str] = ("legacy",),
    max_instances: int = MAX_INSTANCES,
    deadline: float | None = None,
    cancelled: threading.Event | None = None,
) -> LintReport:
    """Serve `project`, list and read it in every era, and return what its declarations get wrong.

    Runs its own event loop, so any thread may call it (the CLI's, or a worker thread of the
    studio). `source_text` is the project file's text, to place findings at their `[[resources]]`
    line; `deadline` (`time.monotonic()` seconds) and `cancelled` stop reading early, which the
    report's notes then say.

    Raises:
        RunError: the project cannot be served (an invalid resource, no free port...).
        ValueError: an unknown era, or a bound below 0.
    """
    return run_interruptibly(
        lint_project_async(project, source_text=source_text, eras=eras, max_instances=max_instances,
                           deadline=deadline, cancelled=cancelled)
    )


async def lint_project_async(
    project: Project,
    *,
    source_text: str | None = None,
    eras: Sequence[str] = ("legacy",),
    max_instances: int = MAX_INSTANCES,
    deadline: float | None = None,
    cancelled: threading.Event | None = None,
) -> LintReport:
    """`lint_project` on the running loop; the server still runs on its own loop thread."""
    for era in eras:
        if era not in ERAS:
            raise ValueError(f"unknown era {era!r} (known: {', '.join(ERAS)})")
    if max_instances < 0:
        raise ValueError(f"max_instances must not be negative, not {max_instances}")
    from mcp import Client  # the SDK's client and the engine load when a lint runs

    from resources_qt.live import InstancesFailed, LiveData, LiveEvent
    from resources_qt.server.factory import build_server

    notes: list[str] = []
    failures: dict[str, str] = {}

    def on_live(event: LiveEvent) -> None:
        if isinstance(event, InstancesFailed):
            failures[event.resource] = event.message

    pool = create_pool(project)
    server = None
    live = None
    ready: asyncio.Future[bool] | None = None
    per_era: list[tuple[str, list[Finding]]] = []
    reads = 0
    first_listing: _Listed | None = None
    try:
        pool.start()
        try:
            resources = bind_project(project, pool)
            server = build_server(project, resources)
            # The listing shows instances as a client sees them: the same live data `serve` runs.
            live = LiveData(server, project, pool)
            live.add_listener(on_live)
            url = server.start_http("127.0.0.1", 0)
        except (ValidationError, OSError, RuntimeError, ValueError) as exc:
            raise RunError(f"cannot serve the project: {exc}") from exc
        ready = asyncio.ensure_future(asyncio.to_thread(pool.wait_ready, _WORKERS_READY_TIMEOUT))
        await asyncio.gather(ready, return_exceptions=True)
        read_timeout = project.server.reader_timeout + 10.0
        concurrency = max(1, min(CONCURRENT_READS, project.server.max_queued_reads))
        for era in eras:
            if _stopped(cancelled, deadline):
                notes.append(f"stopped before the {era} era")
                break
            failures.clear()
            try:
                async with Client(url, mode=era, read_timeout_seconds=read_timeout, cache=None) as client:
                    listed = await _list(client, project, resources)
                    first_listing = first_listing or listed
                    targets = _targets(project, listed, max_instances=max_instances, notes=notes)
                    findings, done = await _read_all(client, targets, project=project, concurrency=concurrency,
                                                     deadline=deadline, cancelled=cancelled)
            except Exception as exc:  # reads catch their own errors: this is the session (connect, broken link)
                logger.debug("the client session failed", exc_info=True)
                raise RunError(f"the SDK client failed in the {era} era: {_leaf(exc)}") from exc
            reads += done
            if done < len(targets):
                notes.append(f"{era}: {len(targets) - done} of {len(targets)} reads left out (stopped early)")
            findings.extend(_instances_failed(failures))
            per_era.append((era, findings))
    finally:
        if live is not None:
            live.close()
        if server is not None:
            server.close()
        pool.close()
        if ready is not None:
            await asyncio.gather(ready, return_exceptions=True)
    found = merge_eras(per_era) if len(eras) > 1 else [finding for _era, items in per_era for finding in items]
    found += static_findings(project)
    if first_listing is not None:
        found += _stale(project, first_listing)
    report = _placed(_certain_fixes(found), resource_lines(project, source_text))
    return LintReport(sort_findings(report), source=str(project.path or ""), reads=reads,
                      notes=tuple(dict.fromkeys(notes)))


def _stopped(cancelled: threading.Event | None, deadline: float | None) -> bool:
    return (cancelled is not None and cancelled.is_set()) or (deadline is not None and time.monotonic() >= deadline)


def _leaf(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


async def _list(client: Client, project: Project, resources: Resources) -> _Listed:
    """Every page of `resources/list`, sorted into direct resources and template instances."""
    own = {spec.uri: spec.name for spec in project.resources if not spec.is_template}
    direct: dict[str, types.Resource] = {}
    instances: dict[str, list[types.Resource]] = {}
    cursor: str | None = None
    for _page in range(MAX_LIST_PAGES):
        result = await client.list_resources(cursor=cursor, cache_mode="bypass")
        for entry in result.resources:
            name = own.get(entry.uri)
            if name is not None and entry.name == name:
                direct[name] = entry
                continue
            template = _resolved(resources, entry.uri)
            if template is not None and template.is_template:
                instances.setdefault(template.name, []).append(entry)
        cursor = result.next_cursor
        if not cursor:
            break
    return _Listed(direct, instances)


def _resolved(resources: Resources, uri: str) -> Any:
    try:
        match = resources.resolve(uri)
    except ValidationError:
        return None
    return match.resource if match is not None else None


def _targets(project: Project, listed: _Listed, *, max_instances: int, notes: list[str]) -> list[ReadTarget]:
    """Every sample, then each template's listed instances up to the bound; one target per URI."""
    targets: dict[str, ReadTarget] = {}
    for spec in project.resources:
        for uri in spec.sample_uris():
            if uri in targets:
                continue
            own = not spec.is_template and uri == spec.uri
            entry = listed.direct.get(spec.name) if own else None
            if entry is not None:
                target = ReadTarget(uri, spec.name, sample=True, mime_type=entry.mime_type or "", size=entry.size,
                                    own=True)
            else:
                target = ReadTarget(uri, spec.name, sample=True, mime_type=spec.mime_type,
                                    size=spec.size if own else None, own=own)
            targets[uri] = target
    for name, entries in listed.instances.items():
        if len(entries) > max_instances:
            notes.append(f"template {name!r}: {len(entries)} instances listed, the first {max_instances} read")
        for entry in entries[:max_instances]:
            mime_type, size = entry.mime_type or "", entry.size
            seen = targets.get(entry.uri)
            if seen is None:
                targets[entry.uri] = ReadTarget(entry.uri, name, sample=False, instance=True, mime_type=mime_type,
                                                size=size)
            elif seen.resource == name and not seen.own:
                # A sample that is listed too: the listing says what its instance declares.
                targets[entry.uri] = replace(seen, instance=True, mime_type=mime_type, size=size)
    chosen = list(targets.values())
    if len(chosen) > MAX_READS:
        notes.append(f"{len(chosen)} URIs to read, the first {MAX_READS} read")
        chosen = chosen[:MAX_READS]
    return chosen


async def _read_all(
    client: Client,
    targets: Sequence[ReadTarget],
    *,
    project: Project,
    concurrency: int,
    deadline: float | None,
    cancelled: threading.Event | None,
) -> tuple[list[Finding], int]:
    """Read every target (at most `concurrency` at once); the findings in target order, and how many were read."""
    from mcp.shared.exceptions import MCPError

    gate = asyncio.Semaphore(concurrency)
    tests = project.tests

    async def one(target: ReadTarget) -> list[Finding] | None:
        async with gate:
            if _stopped(cancelled, deadline):
                return None
            try:
                result = await client.read_resource(target.uri, cache_mode="bypass")
            except MCPError as exc:
                observed = ObservedRead(uri=target.uri, error_code=exc.code, error_message=exc.message)
                return check_read(target, observed, tests=tests)
            except Exception as exc:  # the client could not make sense of the answer: a finding, not a crash
                logger.debug("read of %s failed in the client", target.uri, exc_info=True)
                return check_read(target, None, tests=tests, client_error=f"the client failed: {_leaf(exc)}")
            observed = ObservedRead(uri=target.uri, contents=from_sdk_contents(list(result.contents)))
            return check_read(target, observed, tests=tests)

    # Reads under way finish (each within the reader timeout); only new ones are not started once the
    # deadline passed or the run was cancelled. Cutting a request short makes the SDK's server log an error.
    answers = await asyncio.gather(*(one(target) for target in targets))
    findings = [finding for answer in answers if answer is not None for finding in answer]
    return findings, sum(1 for answer in answers if answer is not None)


def _instances_failed(failures: dict[str, str]) -> list[Finding]:
    return [
        Finding(rule="instances-fail", level="error", resource=name, field="instances",
                message=f"template {name!r} lists no instances: {' '.join(message.split())[:240]}")
        for name, message in failures.items()
    ]


def _stale(project: Project, listed: _Listed) -> list[Finding]:
    """`last-modified-stale` for every resource watching files, against what the listing declares."""
    root = project_folder(project)
    findings: list[Finding] = []
    for spec in project.resources:
        if spec.watch is None or not spec.watch.files:
            continue
        declared: dict[str, str] = {}
        own = spec.annotations.last_modified if spec.annotations is not None else None
        if spec.is_template:
            if own:
                declared[own] = f"template {spec.name!r}"
            for entry in listed.instances.get(spec.name, []):
                value = entry.annotations.last_modified if entry.annotations is not None else None
                if value and value not in declared:
                    declared[value] = f"listed instance {entry.uri} of {spec.name!r}"
        else:
            listing = listed.direct.get(spec.name)
            value = own
            if listing is not None:
                value = listing.annotations.last_modified if listing.annotations is not None else None
            if value:
                declared[value] = f"resource {spec.name!r}"
        pairs = [(label, value) for value, label in declared.items()]
        findings += check_last_modified(spec, pairs, root=root)
    return findings


def _certain_fixes(findings: list[Finding]) -> list[Finding]:
    """Findings whose fixes disagree (two samples sniffed as two formats) lose them: neither is certain."""
    values: dict[tuple[str | None, str], set[object]] = {}
    for finding in findings:
        if finding.fix is not None:
            values.setdefault((finding.resource, finding.fix.field), set()).add(finding.fix.value)
    return [
        replace(finding, fix=None)
        if finding.fix is not None and len(values[(finding.resource, finding.fix.field)]) > 1 else finding
        for finding in findings
    ]


def _placed(findings: list[Finding], lines: dict[str, int]) -> list[Finding]:
    return [replace(finding, line=lines.get(finding.resource or "")) for finding in findings]


def resource_lines(project: Project, text: str | None) -> dict[str, int]:
    """The line of each resource's `[[resources]]` header in `text` (the file `project` was read from).

    Empty when there is no text or its entries do not line up with the project's (an inline
    `resources = [...]` array, or a file changed since): a finding without a line beats a wrong one.
    """
    if text is None:
        return {}
    from resources_qt.project.loader import _locate  # the loader's string-aware scan of tables and keys

    located = _locate(text).resources
    if len(located) != len(project.resources):
        return {}
    return {spec.name: header for spec, (header, _keys) in zip(project.resources, located, strict=True)}


def read_source(path: Path) -> str | None:
    """The project file's text as the loader reads it (universal newlines), or None when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


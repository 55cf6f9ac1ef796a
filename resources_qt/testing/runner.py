"""Running resource tests through the real serving path: the engine over HTTP, read by the SDK client."""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from resources_qt.collection import Resources
from resources_qt.errors import ValidationError
from resources_qt.project import Project
from resources_qt.snippets import bind_project, create_pool
from resources_qt.testing.eras import ERAS
from resources_qt.testing.expectations import SnapshotState, evaluate
from resources_qt.testing.observed import ObservedRead, from_sdk_contents
from resources_qt.testing.regex import DEFAULT_DEADLINE, RegexSearcher
from resources_qt.testing.servable import (
    declared_resources,
    held_back_message,
    implicit_samples,
    resolved_name,
    unservable,
)
from resources_qt.testing.snapshots import SnapshotStore, render_snapshot
from resources_qt.testing.spec import Expectation, TestSpec

if TYPE_CHECKING:
    from mcp import Client

__all__ = [
    "DEFAULT_DEADLINE",
    "ERAS",
    "RunError",
    "TestCase",
    "TestResult",
    "cases_of_resource",
    "collect_tests",
    "held_back_cases",
    "run_tests",
    "run_tests_async",
    "select_tests",
]

logger = logging.getLogger(__name__)

SAMPLE_PREFIX = "sample: "
_WORKERS_READY_TIMEOUT = 30.0
CONCURRENT_READS = 8
T = TypeVar("T")

_QUIET_ON_INTERRUPT = ("mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "resources_qt.server")
"""Reads in flight at once within one era (tests without `max_ms`)."""


class RunError(Exception):
    """The tests could not run at all (the project cannot be served); the message says why."""


@dataclass(frozen=True)
class TestCase:
    """A test to run: a declared test, or a resource's sample (`sample_of` names the resource)."""

    __test__ = False  # not a pytest class

    spec: TestSpec
    sample_of: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class TestResult:
    """The outcome of one test in one era: passed, or the failures, each saying expected vs got."""

    __test__ = False  # not a pytest class

    name: str
    uri: str
    era: str
    elapsed_ms: float
    failures: tuple[str, ...] = ()
    sample_of: str | None = None
    resource: str | None = None
    note: str = ""
    """What the run did besides checking, e.g. "snapshot recorded"."""
    observed: ObservedRead | None = field(default=None, compare=False, repr=False)

    @property
    def passed(self) -> bool:
        return not self.failures

    def label(self, *, with_era: bool) -> str:
        return f"{self.name} [{self.era}]" if with_era else self.name


def collect_tests(project: Project, tests: Sequence[TestSpec], *, samples: bool = True) -> list[TestCase]:
    """The declared tests, then (unless `samples` is False) every resource's sample URIs as implicit tests.

    A sample expects a successful read that resolves to its own resource.
    A declared test of the same URI (or name) replaces it: that test says what
    the read must answer, an error included. A template's placeholder sample
    (`servable.placeholder_sample`: what a new template starts with) is no test.
    """
    cases = [TestCase(spec) for spec in tests]
    if not samples:
        return cases
    names = {case.name for case in cases}
    declared_uris = {spec.uri for spec in tests}
    for resource in project.resources:
        for uri in implicit_samples(resource):
            name = f"{SAMPLE_PREFIX}{uri}"
            if name in names or uri in declared_uris:
                continue
            names.add(name)
            expect = Expectation(resource=resource.name) if resource.name else Expectation()
            cases.append(TestCase(TestSpec(name=name, uri=uri, expect=expect, named=True), sample_of=resource.name))
    return cases


def select_tests(cases: Sequence[TestCase], pattern: str | None) -> list[TestCase]:
    """The cases whose name contains `pattern` (case-insensitive), or match it as a glob when it has * ? or [."""
    if not pattern:
        return list(cases)
    folded = pattern.casefold()
    if any(char in pattern for char in "*?["):
        return [case for case in cases if fnmatch.fnmatchcase(case.name.casefold(), folded)]
    return [case for case in cases if folded in case.name.casefold()]


def cases_of_resource(project: Project, cases: Sequence[TestCase], name: str) -> list[TestCase]:
    """The cases that test resource `name`: its samples, tests expecting it, and tests whose URI resolves to it.

    Resolution is the server's (the same collection rules), over the
    project's declarations alone: no reader runs.
    """
    resources = declared_resources(project)
    return [case for case in cases
            if name in (case.sample_of, case.spec.expect.resource, resolved_name(resources, case.spec.uri))]


def held_back_cases(
    project: Project, cases: Sequence[TestCase], held_back: Mapping[str, Sequence[str]]
) -> dict[str, tuple[str, str]]:
    """{case name: (held-back resource, the failure to report)} for the cases that test a held-back resource.

    A case tests it when it is its sample, expects it, or its URI resolves to
    it over every declaration (served without it, the URI would resolve to
    nothing, or to another template: a message about that would mislead).
    """
    if not held_back:
        return {}
    resources = declared_resources(project)
    out: dict[str, tuple[str, str]] = {}
    for case in cases:
        for target in (case.sample_of, resolved_name(resources, case.spec.uri), case.spec.expect.resource):
            if target is not None and target in held_back:
                out[case.name] = (target, held_back_message(target, held_back[target]))
                break
    return out


ResultCallback = Callable[[TestResult], None]


def run_tests(
    project: Project,
    cases: Sequence[TestCase],
    *,
    eras: Sequence[str] = ("legacy",),
    snapshots: SnapshotStore | None = None,
    update_snapshots: bool = False,
    on_result: ResultCallback | None = None,
    cancelled: threading.Event | None = None,
    deadline: float = DEFAULT_DEADLINE,
    held_back: Mapping[str, Sequence[str]] | None = None,
) -> list[TestResult]:
    """Serve `project`, run every case in every era, and return the results in run order (era by era).

    Runs its own event loop, so it can be called from any thread (the CLI's,
    or a worker thread of the studio). `on_result` is called as each test
    finishes; setting `cancelled` stops before the next test. A test's
    `matches` search gets `deadline` seconds, in a child process killed
    past it (the test then fails saying it timed out).

    Resources that cannot be served (`held_back`: {name: reasons}; by default
    `servable.unservable(project)`, the studio's checks) are left out of the
    server, and every case testing one fails without a read, saying why
    (`not run: 'x' is not served: its reader does not compile: … (line 3)`).

    Raises:
        RunError: the project cannot be served (an invalid resource, no free port...).
        ValueError: an unknown era.
    """
    return run_interruptibly(
        run_tests_async(
            project,
            cases,
            eras=eras,
            snapshots=snapshots,
            update_snapshots=update_snapshots,
            on_result=on_result,
            cancelled=cancelled,
            deadline=deadline,
            held_back=held_back,
        )
    )


def run_interruptibly(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` on a fresh selector loop; on Ctrl+C cancel it so its cleanup (server, workers) runs."""
    # An explicit loop: a GUI process may have installed an event loop policy of its own.
    loop = asyncio.SelectorEventLoop()
    task = loop.create_task(coroutine)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        # Ctrl+C lands here, outside the task: cancel it so its cleanup (server, workers) runs.
        # The SDK (client and server side) and uvicorn log the requests cut short as errors
        # with tracebacks; after an interrupt they are expected, so they are kept quiet.
        quieted = [logging.getLogger(name) for name in _QUIET_ON_INTERRUPT]
        levels = [quiet.level for quiet in quieted]
        for quiet in quieted:
            quiet.setLevel(logging.CRITICAL + 1)
        try:
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        finally:
            for quiet, level in zip(quieted, levels, strict=True):
                quiet.setLevel(level)
        raise
    finally:
        loop.close()


async def run_tests_async(
    project: Project,
    cases: Sequence[TestCase],
    *,
    eras: Sequence[str] = ("legacy",),
    snapshots: SnapshotStore | None = None,
    update_snapshots: bool = False,
    on_result: ResultCallback | None = None,
    cancelled: threading.Event | None = None,
    deadline: float = DEFAULT_DEADLINE,
    held_back: Mapping[str, Sequence[str]] | None = None,
) -> list[TestResult]:
    """`run_tests` on the running loop; the server still runs on its own loop thread."""
    for era in eras:
        if era not in ERAS:
            raise ValueError(f"unknown era {era!r} (known: {', '.join(ERAS)})")
    results: list[TestResult] = []
    if not cases:
        return results
    held = unservable(project) if held_back is None else {name: list(why) for name, why in held_back.items()}
    blocked = held_back_cases(project, cases, held)
    if held:
        project = project.copy()
        project.resources = [spec for spec in project.resources if spec.name not in held]
    if all(case.name in blocked for case in cases):  # nothing to read: no server to start
        for era in eras:
            for case in cases:
                if cancelled is not None and cancelled.is_set():
                    return results
                _report(_blocked_result(case, era, blocked[case.name]), results, on_result)
        return results
    # The SDK's client and the engine load when tests run, not when the window opens.
    from mcp import Client

    from resources_qt.server.factory import build_server

    pool = create_pool(project)
    searcher = RegexSearcher(deadline=deadline)  # its process starts at the first `matches`
    server = None
    ready: asyncio.Future[bool] | None = None
    try:
        pool.start()
        try:
            resources = bind_project(project, pool)
            server = build_server(project, resources)
            url = server.start_http("127.0.0.1", 0)
        except (ValidationError, OSError, RuntimeError, ValueError) as exc:
            raise RunError(f"cannot serve the project: {exc}") from exc
        # Workers start in the background while the server starts; reads would queue until
        # they are up anyway, and waiting here keeps their start out of every read's time.
        ready = asyncio.ensure_future(asyncio.to_thread(pool.wait_ready, _WORKERS_READY_TIMEOUT))
        await asyncio.gather(ready, return_exceptions=True)
        read_timeout = project.server.reader_timeout + 10.0
        # Never more in flight than the project lets wait: a test must not be answered "busy".
        concurrency = max(1, min(CONCURRENT_READS, project.server.max_queued_reads))
        for era in eras:
            if cancelled is not None and cancelled.is_set():
                break
            try:
                async with Client(url, mode=era, read_timeout_seconds=read_timeout, cache=None) as client:
                    await _run_era(
                        client, cases, era=era, resources=resources, snapshots=snapshots, concurrency=concurrency,
                        update_snapshots=update_snapshots, results=results, on_result=on_result, cancelled=cancelled,
                        searcher=searcher, blocked=blocked,
                    )
            except Exception as exc:  # reads catch their own errors: this is the session (connect, broken link)
                logger.debug("the client session failed", exc_info=True)
                raise RunError(f"the SDK client failed in the {era} era: {_leaf(exc)}") from exc
    finally:
        if server is not None:
            server.close()
        searcher.close()
        pool.close()  # also ends a wait for the workers still under way
        if ready is not None:
            await asyncio.gather(ready, return_exceptions=True)
    return results


def _leaf(exc: BaseException) -> str:
    """The first real error inside the SDK's exception groups, as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


async def _run_era(
    client: Client,
    cases: Sequence[TestCase],
    *,
    era: str,
    resources: Resources,
    snapshots: SnapshotStore | None,
    update_snapshots: bool,
    concurrency: int,
    results: list[TestResult],
    on_result: ResultCallback | None,
    cancelled: threading.Event | None,
    searcher: RegexSearcher,
    blocked: Mapping[str, tuple[str, str]],
) -> None:
    """Every case in one era; results are reported in declaration order.

    Reads overlap (at most `concurrency` at once) so a large suite is not
    a chain of round trips. A test with `max_ms` is timed alone instead: it
    waits until the overlapping reads are done, so the time it reports is its
    own read's, not a queue's.
    """
    gate = asyncio.Semaphore(concurrency)

    async def overlapped(case: TestCase) -> TestResult:
        async with gate:
            return await _run_one(client, case, era=era, resources=resources, snapshots=snapshots,
                                  update_snapshots=update_snapshots, searcher=searcher)

    tasks = [None if case.spec.expect.max_ms is not None or case.name in blocked
             else asyncio.create_task(overlapped(case)) for case in cases]  # fmt: skip
    pending = [task for task in tasks if task is not None]
    try:
        for case, task in zip(cases, tasks, strict=True):
            if cancelled is not None and cancelled.is_set():
                break
            if case.name in blocked:
                result = _blocked_result(case, era, blocked[case.name])
            elif task is None:
                await asyncio.gather(*pending, return_exceptions=True)
                result = await _run_one(client, case, era=era, resources=resources, snapshots=snapshots,
                                        update_snapshots=update_snapshots, searcher=searcher)
            else:
                result = await task
            _report(result, results, on_result)
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def _run_one(
    client: Client,
    case: TestCase,
    *,
    era: str,
    resources: Resources,
    snapshots: SnapshotStore | None,
    update_snapshots: bool,
    searcher: RegexSearcher,
) -> TestResult:
    from mcp.shared.exceptions import MCPError  # the client runs: the SDK is loaded (not at the page's opening)

    spec = case.spec
    resource = resolved_name(resources, spec.uri)
    started = time.perf_counter()
    try:
        result = await client.read_resource(spec.uri, cache_mode="bypass")
    except MCPError as exc:
        elapsed = (time.perf_counter() - started) * 1000.0
        observed = ObservedRead(uri=spec.uri, error_code=exc.code, error_message=exc.message,
                                resource=resource, elapsed_ms=elapsed)
    except Exception as exc:  # the client could not make sense of the answer: that is a failure to report
        elapsed = (time.perf_counter() - started) * 1000.0
        logger.debug("read of %s failed in the client", spec.uri, exc_info=True)
        return TestResult(name=spec.name, uri=spec.uri, era=era, elapsed_ms=elapsed, sample_of=case.sample_of,
                          resource=resource, failures=(f"the client failed: {type(exc).__name__}: {exc}",))
    else:
        elapsed = (time.perf_counter() - started) * 1000.0
        observed = ObservedRead(uri=spec.uri, contents=from_sdk_contents(list(result.contents)),
                                resource=resource, elapsed_ms=elapsed)
    snapshot, note = _snapshot_state(spec, observed, snapshots, update=update_snapshots)
    if spec.expect.matches is None:
        failures = evaluate(spec.expect, observed, snapshot=snapshot, searcher=searcher, test=spec.name)
    else:  # waits on the search process, up to its deadline: the other reads in flight go on meanwhile
        failures = await asyncio.to_thread(
            evaluate, spec.expect, observed, snapshot=snapshot, searcher=searcher, test=spec.name
        )
    return TestResult(name=spec.name, uri=spec.uri, era=era, elapsed_ms=elapsed, failures=tuple(failures),
                      sample_of=case.sample_of, resource=resource, note=note, observed=observed)


def _report(result: TestResult, results: list[TestResult], on_result: ResultCallback | None) -> None:
    results.append(result)
    if on_result is not None:
        on_result(result)


def _blocked_result(case: TestCase, era: str, blocked: tuple[str, str]) -> TestResult:
    resource, message = blocked
    return TestResult(name=case.name, uri=case.spec.uri, era=era, elapsed_ms=0.0, failures=(message,),
                      sample_of=case.sample_of, resource=resource)


def _snapshot_state(
    spec: TestSpec, observed: ObservedRead, store: SnapshotStore | None, *, update: bool
) -> tuple[SnapshotState | None, str]:
    if not spec.expect.wants_snapshot:
        return None, ""
    if store is None:
        return SnapshotState(None, "(no snapshot directory: the project has no file)"), ""
    location = str(store.path_for(spec.name))
    try:
        recorded = store.read(spec.name)
    except (OSError, UnicodeDecodeError) as exc:
        return SnapshotState(None, location, error=f"cannot read {location}: {_reason(exc)}"), ""
    if not update or observed.failed:
        return SnapshotState(recorded, location), ""
    rendered = render_snapshot(observed)
    if recorded == rendered:
        return SnapshotState(recorded, location), ""
    try:
        store.write(spec.name, rendered)
    except OSError as exc:
        return SnapshotState(recorded, location, error=f"cannot record {location}: {_reason(exc)}"), ""
    return SnapshotState(rendered, location), "snapshot recorded" if recorded is None else "snapshot updated"


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)

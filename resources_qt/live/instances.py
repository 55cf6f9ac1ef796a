"""Template instances: running a template's `instances` snippet and turning its answer into direct resources."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from resources_qt.errors import ResourceError, ValidationError
from resources_qt.resource import Annotations, Resource
from resources_qt.snippets import SnippetPool
from resources_qt.snippets.kinds import INSTANCES, MAX_INSTANCES, MAX_INSTANCES_BYTES

__all__ = [
    "INSTANCES_TTL",
    "MAX_INSTANCES",
    "MAX_INSTANCES_BYTES",
    "InstanceLister",
    "InstancesError",
    "parse_answer",
    "parse_instances",
]

logger = logging.getLogger(__name__)

WORKERS_START_TIMEOUT = 60.0
"""How long live data's first listing waits for the snippet workers to start before it runs anyway."""

INSTANCES_TTL = 10.0
"""Seconds resources/list reuses a template's instances before it runs the snippet again; a watched change,
a polling round and an edit of the template, its snippet or the prelude run it at once."""

_OPTIONAL = ("name", "title", "description", "mime_type", "size", "annotations")


class InstancesError(Exception):
    """An `instances` answer that cannot be listed; the message says which item and why."""


def _too_many(count: int) -> str:
    return INSTANCES.too_many(count)


def _too_large(size: int) -> str:
    return INSTANCES.too_large(size)


def parse_answer(template: Resource, text: str) -> list[Resource]:
    """The JSON text the worker's `instances()` entry answered, as `parse_instances` resources."""
    if len(text) > MAX_INSTANCES_BYTES:  # the worker refuses these; checked again before anything is parsed
        raise InstancesError(_too_large(len(text)))
    try:
        answer = json.loads(text)
    except ValueError as exc:
        raise InstancesError(f"instances() returned something that is not a list: {text[:80]!r}") from exc
    return parse_instances(template, answer)


def parse_instances(template: Resource, answer: object) -> list[Resource]:
    """The instances snippet's answer as direct resources read through `template`'s reader.

    Each item is a dict of the template's variables (plus optional `name`,
    `title`, `description`, `mime_type`, `size`, `annotations`) or a concrete
    URI string the template matches. Raises `InstancesError` naming the first
    bad item; nothing is half-listed.
    """
    if isinstance(answer, str | bytes) or not isinstance(answer, list):
        raise InstancesError(f"instances() must return a list, not {type(answer).__name__}")
    if len(answer) > MAX_INSTANCES:
        raise InstancesError(_too_many(len(answer)))
    compiled = template.compiled_template
    variables = compiled.variable_names
    out: list[Resource] = []
    seen: set[str] = set()
    for index, item in enumerate(answer):
        where = f"instances()[{index}]"
        extra: Mapping[str, Any] = {}
        if isinstance(item, str):
            params = compiled.match(item)
            if params is None:
                raise InstancesError(f"{where}: {item!r} does not match the template {template.uri_template!r}")
            uri = item
            values = [str(params.get(v, "")) for v in variables]
        elif isinstance(item, dict):
            unknown = set(item) - set(variables) - set(_OPTIONAL)
            if unknown:
                raise InstancesError(
                    f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} (the template's variables "
                    f"are {', '.join(variables)}; optional: {', '.join(_OPTIONAL)})"
                )
            missing = [v for v in variables if v not in item]
            if missing:
                raise InstancesError(f"{where}: missing the template variable(s) {', '.join(missing)}")
            values = []
            for variable in variables:
                value = item[variable]
                if isinstance(value, bool) or not isinstance(value, str | int | float):
                    raise InstancesError(f"{where}: {variable} must be a string, not {type(value).__name__}")
                values.append(str(value))
            uri = compiled.expand(dict(zip(variables, values, strict=True)))
            if compiled.match(uri) is None:
                raise InstancesError(f"{where}: {uri!r} (expanded) does not match the template")
            extra = item
        else:
            raise InstancesError(f"{where} must be a dict of the template's variables or a URI string, "
                                 f"not {type(item).__name__}")
        if uri in seen:
            continue  # listed twice: once is enough
        seen.add(uri)
        out.append(_instance(template, uri, values, extra, where))
    return out


def _instance(template: Resource, uri: str, values: list[str], extra: Mapping[str, Any], where: str) -> Resource:
    name = extra.get("name") or f"{template.name} ({', '.join(values)})"
    fields: dict[str, Any] = {}
    for key in ("name", "title", "description", "mime_type"):
        value = extra.get(key)
        if value is not None and not isinstance(value, str):
            raise InstancesError(f"{where}: {key} must be a string, not {type(value).__name__}")
    size = extra.get("size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise InstancesError(f"{where}: size must be a non-negative integer, not {size!r}")
    annotations = template.annotations
    raw = extra.get("annotations")
    if raw is not None:
        if not isinstance(raw, dict) or set(raw) - {"audience", "priority", "last_modified"}:
            raise InstancesError(f"{where}: annotations must be a dict of audience, priority, last_modified")
        try:
            audience = raw.get("audience", [])
            annotations = Annotations(tuple(audience), raw.get("priority"), raw.get("last_modified"))
        except (ValidationError, TypeError) as exc:
            raise InstancesError(f"{where}: annotations: {exc}") from exc
    fields.update(
        name=str(name),
        uri=uri,
        title=extra.get("title") or template.title,
        description=extra.get("description") or template.description,
        mime_type=extra.get("mime_type") or template.mime_type,
        icons=template.icons,
        annotations=annotations,
        size=size,
        reader=template.reader,
        cache=template.cache,
    )
    resource = Resource(**fields)
    try:
        resource.validate()
    except ValidationError as exc:
        raise InstancesError(f"{where}: {exc.message}") from exc
    return resource



def _signature(resource: Resource) -> tuple[object, ...]:
    """What a client is told of an instance: two answers with equal signatures list the same."""
    return (resource.name, resource.uri, resource.title, resource.description, resource.mime_type, resource.size,
            resource.annotations)


_Key = tuple[str, str, str]
"""What a run depends on besides its template: (snippet source, prelude digest, project folder)."""


_PASSING = frozenset({"busy", "timeout", "abandoned", "unavailable"})
"""Pool failures that say little about the snippet's answer (a queue, a slow start): not kept."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    instances: tuple[Resource, ...] = ()
    error: str | None = None
    kept: bool = True
    """False: a failure the next listing tries again instead of reusing."""


@dataclass(slots=True)
class _Run:
    template: Resource
    key: _Key
    seq: int
    future: Future[_Outcome]


@dataclass(slots=True)
class _Kept:
    template: Resource
    key: _Key
    seq: int
    expires: float
    outcome: _Outcome



_parser_lock = threading.Lock()
_parser: list[ThreadPoolExecutor] = []


def _parse_thread() -> ThreadPoolExecutor:
    """The thread answers are parsed on: never the server's loop (10,000 instances take 0.2-0.35 s)."""
    with _parser_lock:
        if not _parser:
            _parser.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="instances-parse"))
        return _parser[0]


def _in_a_request() -> bool:
    # Imported here: the window imports resources_qt.live long before any server stack.
    from resources_qt.server.transports import current_transport

    return bool(current_transport())


class InstanceLister:
    """Runs `instances` snippets in the pool (under the reader timeout) and keeps their parsed answers.

    A listing (a call made while a client's request is handled) reuses a
    template's answer for `ttl` seconds, as long as the template (the same
    collection object: an edit or reload that changes it replaces it), its
    snippet, the pool's prelude and project folder are the same. Calls made
    outside a request (live data's own re-listing after a watched change, a
    polling round, the start: they pass `fresh=True`) run the snippet and
    renew the answer. Concurrent calls share one run: 20 clients listing
    during a 1 s snippet wait for the same answer. The run is a task of the
    first caller's loop (the pool's loop-driven read, as for any reader) and
    is parsed on a thread of its own, so the loop only waits, and a caller
    that gives up leaves the run to the others.
    A failure is kept like an answer, except when the pool timed the run out
    or refused it (busy, shutting down): the next listing runs it again, and
    a caller that had joined that run gets one run of its own.
    `runs` counts the snippet runs started.
    """

    def __init__(self, pool: SnippetPool, *, ttl: float = INSTANCES_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl < 0 or not math.isfinite(ttl):
            raise ValidationError(f"ttl must be a finite number of seconds >= 0, not {ttl!r}", field="ttl")
        self._pool = pool
        self._ttl = float(ttl)
        self._clock = clock
        self._lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}
        self._running: dict[str, _Run] = {}
        self._reads: set[asyncio.Task[str]] = set()
        self._seq = 0
        self.runs = 0

    async def list(self, template: Resource, source: str, *, fresh: bool | None = None) -> tuple[Resource, ...]:
        """The template's instances; raises `InstancesError` with the snippet's or the parser's words.

        `fresh`: run the snippet whatever is kept (default: unless called while a request is handled).
        The same tuple comes back while the answer is reused: callers must not need a copy.
        """
        found, joined = self._lookup(template, source, fresh=not _in_a_request() if fresh is None else fresh)
        # A caller that is cancelled cancels only its own wait: the run is marked running, so it goes on.
        outcome = found if isinstance(found, _Outcome) else await asyncio.wrap_future(found)
        if joined and not outcome.kept:
            # The run it joined was timed out or refused by the pool (it may have waited for workers that were
            # still starting): once, this caller gets a run (and timeout) of its own, as a lone caller would.
            found, _ = self._lookup(template, source, fresh=False)
            outcome = found if isinstance(found, _Outcome) else await asyncio.wrap_future(found)
        if outcome.error is not None:
            raise InstancesError(outcome.error)
        return outcome.instances

    async def wait_for_workers(self, timeout: float = WORKERS_START_TIMEOUT) -> bool:
        """Wait (off the loop) until the pool's workers are up: a first listing must not spend its reader
        timeout on their start, or a slow start lists nothing and the next listing announces a change."""
        return await asyncio.to_thread(self._pool.wait_ready, timeout)

    def forget(self, name: str | None = None) -> None:
        """Drop the kept answer of template `name` (of every template: None); the next listing runs it."""
        with self._lock:
            if name is None:
                self._kept.clear()
            else:
                self._kept.pop(name, None)

    def _lookup(self, template: Resource, source: str, *, fresh: bool) -> tuple[_Outcome | Future[_Outcome], bool]:
        """The kept outcome, or the run to wait for; True if that run was started for another caller."""
        key = (source, self._pool.prelude_digest, self._pool.project_dir)
        name = template.name
        with self._lock:
            now = self._clock()
            kept = self._kept.get(name)
            if not fresh and kept is not None and kept.template is template and kept.key == key \
                    and now < kept.expires:
                return kept.outcome, False
            running = self._running.get(name)
            # A fresh call never joins a run that may have started before the change it was told of.
            if not fresh and running is not None and running.template is template and running.key == key:
                return running.future, True
            # Expired answers of other templates go (a renamed one's would stay forever); this one's stays
            # until the run ends, to hand its tuple back if the run lists the same.
            for gone in [n for n, k in self._kept.items() if k.expires <= now and n != name]:
                del self._kept[gone]
            self._seq += 1
            self.runs += 1
            run = _Run(template, key, self._seq, Future())
            run.future.set_running_or_notify_cancel()
            self._running[name] = run
        self._start(run)
        return run.future, False

    def _start(self, run: _Run) -> None:
        # A task of the caller's loop, not the caller's own: its wait for a worker is the pool's
        # loop-driven path (as any read's), and a caller that gives up leaves the run to the others.
        name = run.template.name
        read = asyncio.get_running_loop().create_task(
            # The snippet's own instances() entry, in the worker: the caps are checked there (kinds.INSTANCES).
            self._pool.call(INSTANCES, key=f"{name}#instances", source=run.key[0])
        )
        self._reads.add(read)
        read.add_done_callback(self._reads.discard)
        read.add_done_callback(lambda done: self._parse_later(run, done))

    def _parse_later(self, run: _Run, read: asyncio.Task[str]) -> None:
        # On the server's loop: the parse (0.2-0.35 s for 10,000 instances) must not run there.
        try:
            _parse_thread().submit(self._finish, run, read)
        except RuntimeError as exc:  # the interpreter is shutting down
            self._settle(run, _Outcome(error=f"instances() could not be parsed: {exc}", kept=False))

    def _finish(self, run: _Run, read: asyncio.Task[str]) -> None:
        name = run.template.name
        if read.cancelled():  # the loop is closing: no answer, and nothing kept
            self._settle(run, _Outcome(error="instances() was cancelled", kept=False))
            return
        try:
            text = read.result()
            outcome = _Outcome(self._same_or(run, tuple(parse_answer(run.template, text))))
        except ResourceError as exc:  # the snippet failed, timed out, or the pool refused the call
            message = str(exc.message)  # worded by the pool as "instances() ...", what actually ran
            reason = exc.data.get("reason") if isinstance(exc.data, dict) else None
            outcome = _Outcome(error=message, kept=reason not in _PASSING)
        except InstancesError as exc:
            outcome = _Outcome(error=str(exc))
        except Exception as exc:
            logger.exception("Listing the instances of %s failed", name)
            outcome = _Outcome(error=f"instances() could not be listed: {type(exc).__name__}: {exc}")
        self._settle(run, outcome)

    def _same_or(self, run: _Run, instances: tuple[Resource, ...]) -> tuple[Resource, ...]:
        """The kept tuple when `instances` lists the same: the listing then keeps its split (compared here,
        off the server's loop)."""
        with self._lock:
            kept = self._kept.get(run.template.name)
        if kept is None or kept.template is not run.template or kept.outcome.error is not None:
            return instances
        old = kept.outcome.instances
        same = len(old) == len(instances) and all(
            _signature(a) == _signature(b) for a, b in zip(old, instances, strict=True)
        )
        return old if same else instances

    def _settle(self, run: _Run, outcome: _Outcome) -> None:
        name = run.template.name
        with self._lock:
            if self._running.get(name) is run:
                del self._running[name]
            kept = self._kept.get(name)
            if kept is None or kept.seq < run.seq:  # an older run ending late does not replace a newer answer
                if outcome.kept:
                    self._kept[name] = _Kept(run.template, run.key, run.seq, self._clock() + self._ttl, outcome)
                else:
                    self._kept.pop(name, None)
        run.future.set_result(outcome)

    def __repr__(self) -> str:
        return f"InstanceLister({len(self._kept)} kept, {len(self._running)} running, ttl {self._ttl:g} s)"


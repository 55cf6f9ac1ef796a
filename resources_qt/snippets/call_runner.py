"""Running one call of a snippet and answering it: what a worker process and the thread readers share."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Generator, Iterable
from typing import Any, TypeVar

from resources_qt.content import to_contents
from resources_qt.errors import NotFound, ReaderFailedError
from resources_qt.snippets import messages
from resources_qt.snippets.capture import OutputCapture
from resources_qt.snippets.namespace import ReadContext, reading
from resources_qt.snippets.protocol import (
    Call,
    CompleteCall,
    CompleteDone,
    EntryCall,
    Failed,
    NeedSource,
    ReadCall,
    ReadDone,
    ValueDone,
    WorkerConfig,
    call_kind,
)
from resources_qt.snippets.runtime import (
    MissingSource,
    SnippetFailure,
    SnippetRuntime,
    describe_exception,
    format_snippet_traceback,
)

__all__ = ["MAX_COMPLETIONS", "Answer", "CallRunner"]

_T = TypeVar("_T")

Steps = Generator[Awaitable[object], object, _T]
"""A call's work: it yields what a snippet returned to be awaited, is sent the result, returns the answer."""

Answer = ReadDone | CompleteDone | ValueDone | Failed | NeedSource

MAX_COMPLETIONS = 10_000
"""Values a completion snippet may send back. MCP shows a client at most 100; the server sends the first
100 with the real `total` and `hasMore`, so more than 100 must come back for the count to be true."""

_dumps = json.dumps  # bound before any snippet runs: a patched json cannot change an answer's text


class CallRunner:
    """Runs one call of a snippet: loads its source (`SnippetRuntime`), calls its entry, answers as the protocol
    says (`ReadDone`, `Failed`, ...). A worker process runs one at a time (`handle`); the thread readers run
    `handle` in their threads and `handle_async` on their async lane."""

    def __init__(self, capture: OutputCapture, config: WorkerConfig) -> None:
        self._capture = capture
        self._config = config
        self._runtime = SnippetRuntime()
        self._loop: asyncio.AbstractEventLoop | None = None

    def handle(self, call: Call) -> Answer:
        """Answer `call`; what an async snippet returns runs to completion on this worker's own loop."""
        steps, sent = self._steps(call), _Sent()
        while (awaitable := sent.advance(steps)) is not None:
            try:
                sent.value = self._event_loop().run_until_complete(_await(awaitable))
            except BaseException as exc:  # the snippet's own failure: `_steps` answers for it
                sent.error = exc
        return sent.answer

    async def handle_async(self, call: Call) -> Answer:
        """As `handle`, awaiting on the running loop: many calls overlap there (the thread readers' async loop).

        Cancelled (at its deadline, or as the pool closes), it raises CancelledError and answers nothing.
        """
        steps, sent = self._steps(call), _Sent()
        while (awaitable := sent.advance(steps)) is not None:
            try:
                sent.value = await awaitable
            except asyncio.CancelledError:
                steps.close()
                raise
            except BaseException as exc:
                sent.error = exc
        return sent.answer

    def _steps(self, call: Call) -> Steps[Answer]:
        name = call_kind(call).function or "read"  # a kind without an entry is never sent (the pool refuses)
        self._capture.begin(call.key)
        try:
            self._runtime.sync_prelude(call.prelude_digest, call.prelude)
            fn = self._runtime.function(name, call.key, call.digest, call.source)
            if isinstance(call, ReadCall):
                return (yield from self._read(call, fn))
            if isinstance(call, EntryCall):
                return (yield from self._value(call, fn))
            assert isinstance(call, CompleteCall)
            return (yield from self._complete(call, fn))
        except MissingSource as missing:
            return NeedSource("prelude" if missing.what == "prelude" else "snippet")
        except NotFound as exc:  # nothing exists at this URI: not a failure of the snippet
            return Failed("not-found", exc.reason)
        except SnippetFailure as failure:
            return self._failure(call, failure)
        except MemoryError:
            return Failed("memory", messages.out_of_memory(call, self._config.memory_limit_mb))
        except SystemExit as exc:
            return Failed("exit", messages.sys_exit(call, exc.code))
        except GeneratorExit:
            raise  # handle_async was cancelled: nothing to answer
        except BaseException as exc:
            self._capture.note(format_snippet_traceback(exc))
            return Failed(
                "raised", messages.call_failed(call, describe_exception(exc, f"<{name} {call.key}>"))
            )

    def _failure(self, call: Call, failure: SnippetFailure) -> Failed:
        if failure.kind == "syntax":
            return Failed("syntax", messages.not_compiling(call, failure.detail))
        if failure.kind == "no-entry":
            return Failed("no-entry", messages.no_entry(call))
        if failure.kind == "prelude":
            self._note_cause(failure)
            return Failed("prelude", messages.prelude_failed(call, failure.detail))
        self._note_cause(failure)
        return Failed("raised", messages.call_failed(call, failure.detail))

    def _note_cause(self, failure: SnippetFailure) -> None:
        cause = failure.__cause__
        if cause is not None:
            self._capture.note(format_snippet_traceback(cause))

    def _read(self, call: ReadCall, fn: Callable[..., Any]) -> Steps[ReadDone | Failed]:
        with reading(ReadContext(call.uri, call.mime_type)):
            result = yield from _awaited(fn(call.uri, dict(call.params)))
        try:
            contents = to_contents(result, uri=call.uri, mime_type=call.mime_type)
        except ReaderFailedError as exc:  # None, empty bytes, or not content at all
            return Failed("result", exc.message)
        return ReadDone([(c.uri, c.mime_type, c.text, c.blob, c.meta) for c in contents])

    def _complete(self, call: CompleteCall, fn: Callable[..., Any]) -> Steps[CompleteDone]:
        result = yield from _awaited(fn(call.variable, call.value, dict(call.context)))
        if result is None:
            return CompleteDone([])
        if isinstance(result, str) or not isinstance(result, Iterable):
            raise TypeError(f"complete() must return a list of strings, not {type(result).__name__}")
        values: list[str] = []
        for item in result:
            values.append(str(item))
            if len(values) == MAX_COMPLETIONS:
                break
        return CompleteDone(values)

    def _value(self, call: EntryCall, fn: Callable[..., Any]) -> Steps[ValueDone | Failed]:
        """The entry's result as JSON text, refused here past its kind's caps: only the size is sent."""
        kind = call_kind(call)
        result = yield from _awaited(fn(*call.args))
        if kind.max_items and isinstance(result, list) and len(result) > kind.max_items:
            return Failed("result", kind.too_many(len(result)))
        text = _dumps(result, default=str)
        if kind.max_bytes and len(text) > kind.max_bytes:
            return Failed("result", kind.too_large(len(text)))
        return ValueDone(text)

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        # One loop per worker, kept between calls, so module-level async
        # resources (a client session, say) stay bound to a live loop.
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
        return self._loop


class _Sent:
    """What a driver sends back into a call's steps: the awaited value or the error it raised; then the answer."""

    def __init__(self) -> None:
        self.value: object = None
        self.error: BaseException | None = None
        self.answer: Answer = Failed("internal", "the call gave no answer")

    def advance(self, steps: Steps[Answer]) -> Awaitable[object] | None:
        """The next awaitable of `steps`, or None once they answered (then in `answer`)."""
        value, error, self.value, self.error = self.value, self.error, None, None
        try:
            return steps.send(value) if error is None else steps.throw(error)
        except StopIteration as done:
            self.answer = done.value
            return None


async def _await(awaitable: Awaitable[object]) -> object:
    return await awaitable


def _awaited(result: object) -> Steps[object]:
    """`result`, or what it gives once awaited: the driver (`handle` or `handle_async`) awaits it."""
    if not inspect.isawaitable(result):
        return result
    return (yield result)

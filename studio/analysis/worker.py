"""The analysis helper process's client: one worker thread feeds it requests, newest per owner first."""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from typing import Any

from PySide6.QtCore import QObject, Signal

from studio.analysis.completion_source import Candidate, CheckRequest, CompletionRequest
from studio.analysis.helper_process import encode_request
from studio.analysis.source_warnings import SourceWarning, WarningsRequest

logger = logging.getLogger(__name__)

__all__ = ["CompletionWorker"]


def _release(process: subprocess.Popen[str]) -> None:
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            # A pipe to a dead process may fail to flush; it is closed all the same.
            with contextlib.suppress(OSError):
                pipe.close()


class CompletionWorker(QObject):
    """Feeds completion requests to the completion process from one thread; newest request per owner wins.

    The thread blocks on the process's pipe (the GIL is free meanwhile), and
    requests that were superseded while it waited are never sent; a waiting
    completion goes before checks and warnings (someone waits at the cursor). A process
    that died is started again for the next request. The process ends when
    this one does (its stdin closes), or on `close`.

    Signals:
        completed(CompletionRequest request, list candidates): a request was answered with a
            `list[Candidate]` (emitted from the worker thread; receivers in the GUI thread get it queued).
        checked(CheckRequest request, object diagnostic): a check was answered: (line, column, message),
            None when the snippet compiles, or False when the process could not check it (a union Qt cannot
            name, so `object`).
        warnings_found(WarningsRequest request, list warnings): pyflakes answered with a `list[SourceWarning]`
            ([] also when the process could not answer: no warnings are better than a wait).
    """

    completed = Signal(CompletionRequest, list)
    checked = Signal(CheckRequest, object)
    warnings_found = Signal(WarningsRequest, list)

    _shared: CompletionWorker | None = None

    def __init__(self) -> None:
        super().__init__()
        self._pending: dict[tuple[str, int], CompletionRequest | CheckRequest | WarningsRequest] = {}
        self._wake = threading.Condition()
        self._closed = False
        self._warm = False
        self._process: subprocess.Popen[str] | None = None
        self._thread = threading.Thread(target=self._run, name="code-completion", daemon=True)
        self._thread.start()

    @classmethod
    def shared(cls) -> CompletionWorker:
        """The process-wide worker (started on first use; closed at interpreter exit)."""
        if cls._shared is None:
            cls._shared = cls()
            atexit.register(cls._shared.close)
        return cls._shared

    def submit(self, request: CompletionRequest | CheckRequest | WarningsRequest) -> None:
        """Queue `request`, replacing a not yet sent one of the same kind from the same owner."""
        with self._wake:
            self._pending[(type(request).__name__, request.owner)] = request
            self._wake.notify()

    def warm_up(self) -> None:
        """Start the completion process now (it loads jedi for seconds), so the first request is quick."""
        with self._wake:
            self._warm = True
            self._wake.notify()

    @property
    def ready(self) -> bool:
        """True while a completion process is running and has loaded jedi."""
        process = self._process
        return process is not None and process.poll() is None

    def close(self) -> None:
        """Stop the thread and the completion process (idempotent)."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        process = self._process
        if process is not None:
            if process.stdin is not None and process.poll() is None:
                process.stdin.close()  # end of input ends the process
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            _release(process)

    def _start_process(self) -> subprocess.Popen[str]:
        env = dict(os.environ)
        # The same modules as this process, wherever they were imported from.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        process = subprocess.Popen(
            [sys.executable, "-m", "studio.analysis.helper_process"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", env=env, bufsize=1,
        )  # fmt: skip
        assert process.stdout is not None
        ready = process.stdout.readline()
        if not ready:
            code = process.wait()
            _release(process)
            raise OSError(f"the completion process exited ({code}) before it was ready")
        logger.debug("completion process %d ready", process.pid)
        return process

    def _ensure_process(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            if self._process is not None:  # a dead one: release its pipes before starting the next
                _release(self._process)
            try:
                self._process = self._start_process()
            except OSError:
                self._process = None
                raise
        return self._process

    def _ask(self, request: CompletionRequest | CheckRequest | WarningsRequest) -> dict[str, Any]:
        process = self._ensure_process()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(encode_request(request) + "\n")
        process.stdin.flush()
        answer = process.stdout.readline()
        if not answer:
            raise OSError(f"the completion process exited ({process.wait()})")
        data: dict[str, Any] = json.loads(answer)
        return data

    def _next_request(self) -> CompletionRequest | CheckRequest | WarningsRequest | None:
        """The newest completion first (someone waits at the cursor), then the newest of the rest."""
        if not self._pending:
            return None
        key = next((k for k in reversed(self._pending) if k[0] == CompletionRequest.__name__), None)
        return self._pending.pop(key) if key is not None else self._pending.popitem()[1]

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._closed and not self._warm:
                    self._wake.wait()
                if self._closed:
                    return
                self._warm = False
                request = self._next_request()
            if request is None:  # only asked to warm up (outside the lock: starting takes seconds)
                try:
                    self._ensure_process()
                except OSError as exc:
                    logger.warning("completion unavailable: %s", exc)
                continue
            try:
                data = self._ask(request)
            except (OSError, ValueError) as exc:
                logger.warning("completion process unavailable: %s", exc)
                data = {}
            if isinstance(request, WarningsRequest):
                rows = data.get("warnings", []) if data.get("id") == request.request_id else []
                found_warnings = [SourceWarning(int(a), int(b), int(c), str(m)) for a, b, c, m in rows]
                self.warnings_found.emit(request, found_warnings)
            elif isinstance(request, CheckRequest):
                found = data.get("diagnostic", False) if data.get("id") == request.request_id else False
                self.checked.emit(request, tuple(found) if isinstance(found, list) else found)
            else:
                names = data.get("candidates", [])
                self.completed.emit(request, [Candidate(name=str(n), kind=str(k), suffix=str(x)) for n, k, x in names])

"""The snippet worker process: set up limits and capture, then answer calls one at a time (or many: `worker_many`).

A worker runs every snippet it is sent in its own process, so a snippet can
loop, exit, crash or exhaust memory without touching the studio or the
server. Snippet modules stay loaded between calls: module-level state (a
cache, a counter, an open connection) lives as long as the worker process,
until the snippet or the prelude is edited. Workers are replaced after a
timeout, crash, exit or memory overrun, and a pool has several, so such
state is per worker and must never be relied on for correctness.

Isolation model (robustness, not a sandbox: snippets run with the user's
rights and can do anything the user can):

- Each worker runs below a supervisor process that leads its own session and
  process group and (on Linux) is the child subreaper of whatever a snippet
  starts: a process in a new session or behind a double fork still re-parents
  to it. When the worker ends, however it ends (stopped, killed at its
  deadline, exited, crashed, killed by the out-of-memory killer), the
  supervisor kills and reaps every process below it and exits as the worker
  did; elsewhere the pool kills the worker's process group. `max_processes` (RLIMIT_NPROC, counted
  per user by the kernel) and `max_file_size_mb` (RLIMIT_FSIZE) apply where
  the platform has them; RLIMIT_AS caps memory.
- Each snippet module has its own globals (the helpers and the prelude's
  public names, copied), so a name one snippet defines or rebinds is not
  seen by another. Objects the prelude creates are shared by reference.
- Results are converted to content inside the worker with functions bound
  when the worker module was imported (`resources_qt.content.dump_json`, the
  base64 codecs), and sent back as plain data (`resources_qt.snippets.wire`),
  so patching `json`, `base64` or the studio's own modules cannot change how
  another resource's result is converted or framed, and nothing a snippet
  returns is ever unpickled by the server.
- After every call the worker puts back what a snippet changed in a guarded
  set of shared modules and classes (builtins, json, base64, binascii, the
  content helpers; `resources_qt.snippets.guard`), so such a patch lasts for
  that call only. Other modules a snippet patches stay patched in that
  worker until it is replaced.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NoReturn

from resources_qt.snippets import messages, wire
from resources_qt.snippets.call_runner import CallRunner
from resources_qt.snippets.capture import OutputCapture
from resources_qt.snippets.guard import ModuleGuard
from resources_qt.snippets.namespace import set_project_dir
from resources_qt.snippets.protocol import (
    Call,
    Failed,
    Output,
    Ready,
    Shutdown,
    Stream,
    WorkerConfig,
)
from resources_qt.snippets.worker_many import serve_many

__all__ = ["worker_main"]

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_M_ARENA_MAX = -8

_SUPERVISOR_POLL = 1.0
"""Seconds between the supervisor's checks that the pool's process is still there."""

_CLEANUP_SECONDS = 5.0
"""How long the supervisor goes on killing and reaping what is left below it before it exits anyway."""


def worker_main(conn: Connection, config: WorkerConfig) -> None:
    """Process target: never returns normally; exits with `os._exit` so stray threads cannot hold it."""
    send_lock = threading.Lock()
    encode = wire.encode

    def send_bytes(data: bytes) -> None:
        with send_lock:
            conn.send_bytes(data)

    def send(message: wire.WorkerMessage) -> None:
        send_bytes(encode(message))

    def forward(key: str, stream: str, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            send(Output(key, text, _stream(stream)))

    _own_process_group()
    supervisor = _split_off_supervisor(conn, config.parent_pid)
    _detach_from_terminal()
    if supervisor is not None and os.getppid() != supervisor:
        os._exit(0)  # the supervisor died before the death signal was armed
    capture = OutputCapture(forward=forward, limit=config.output_limit)
    capture.install()
    if supervisor is None:
        _watch_parent(config.parent_pid)  # with a supervisor, it watches the pool's process
    _tame_allocations()
    _limit_memory(config.memory_limit_mb)
    _limit_processes_and_files(config.max_processes, config.max_file_size_mb)
    _enter_project(config.project_dir)
    guard = ModuleGuard.snapshot()
    worker = CallRunner(capture, config)
    # What the worker imported lives as long as it does: a collection during a read then walks only
    # what snippets made, not the worker's modules.
    gc.collect()
    gc.freeze()
    try:
        send(Ready(os.getpid()))
        if config.concurrent:
            serve_many(conn, config=config, capture=capture, guard=guard, send=send_bytes)
            return
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if isinstance(message, Shutdown):
                break
            if not isinstance(message, Call):
                continue
            reply = worker.handle(message)
            capture.finish()
            try:
                send(reply)
            except (OSError, EOFError):
                break
            except MemoryError:
                send(Failed("memory", messages.out_of_memory(message, config.memory_limit_mb)))
            except Exception as exc:
                send(
                    Failed("result", messages.call_failed(message, f"the result cannot be sent back: {exc}"))
                )
            # After the answer is on its way, so the check costs no read any time;
            # still before the next call starts.
            guard.restore()
            if config.project_dir:
                # A snippet that changed directory does not move the next one.
                with contextlib.suppress(OSError):
                    os.chdir(config.project_dir)
    finally:
        capture.finish()
        os._exit(0)


def _stream(name: str) -> Stream:
    return "stderr" if name == "stderr" else "stdout"


def _enter_project(folder: str) -> None:
    """Run snippets in the project's folder, and name it `PROJECT_DIR` in their namespace."""
    if not folder:
        return
    set_project_dir(Path(folder))
    # A folder deleted meanwhile: snippets still see PROJECT_DIR, and opening files there fails clearly.
    with contextlib.suppress(OSError):
        os.chdir(folder)


def _own_process_group() -> None:
    # A session of its own (the supervisor's, where there is one): the pool can kill the group, so
    # whatever a snippet forks goes with the worker; and a terminal's signals do not reach it.
    with contextlib.suppress(OSError, AttributeError):
        os.setsid()


def _split_off_supervisor(conn: Connection, parent_pid: int) -> int | None:
    """Fork on Linux: the parent stays behind as the supervisor, the child goes on as the worker.

    The supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER), so whatever a
    snippet starts, in a session of its own or through a double fork, stays
    below it when its own parent exits; it reaps those orphans (the worker
    itself never waits for a process it did not start), and when the worker
    ends, however it ends, it kills and reaps everything below it and exits as
    the worker did. Returns the supervisor's pid in the worker, or None where
    the platform has no subreapers (the process group is all the pool reaches).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return None
    except (OSError, AttributeError):
        return None
    watched = {signal.SIGCHLD, signal.SIGTERM}
    # Blocked before the fork, so the supervisor misses no signal; the worker unblocks them at once.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    supervisor = os.getpid()
    try:
        worker = os.fork()
    except OSError:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        return None
    if worker == 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        return supervisor
    conn.close()  # the pipe is the worker's alone: its death shows as the pool's end of file
    _supervise(worker, parent_pid, libc)


def _supervise(worker: int, parent_pid: int, libc: Any) -> NoReturn:
    """The supervisor's loop: reap orphans until the worker ends (or is to end), clean up, exit as it did."""
    gc.disable()  # a collection writes to every object: copies of the pages shared with the worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)  # the forkserver gone: clean up, like a SIGTERM
    initial_parent = os.getppid()
    status: int | None = None
    while status is None:
        status = _reap(worker)
        if status is not None:
            break
        received = signal.sigtimedwait({signal.SIGCHLD, signal.SIGTERM}, _SUPERVISOR_POLL)
        stop = received is not None and received.si_signo == signal.SIGTERM
        if stop or os.getppid() != initial_parent or not _alive(parent_pid):
            # The worker is this process's child and not reaped yet: its pid cannot have been reused.
            with contextlib.suppress(OSError):
                os.kill(worker, signal.SIGKILL)
    _end_descendants()
    _exit_as(status)


def _reap(worker: int) -> int | None:
    """Reap every child that has ended; the worker's wait status if it was among them."""
    found = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if pid == 0:
            return found
        if pid == worker:
            found = status


def _end_descendants() -> None:
    # Every process below is ours to reap (this process is their subreaper): kill all of them until
    # none is left. A process forking meanwhile leaves its child to the next round. With no child
    # left there is nothing below, and /proc is not read at all (the common case).
    deadline = time.monotonic() + _CLEANUP_SECONDS
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            return
        if time.monotonic() > deadline:
            return
        for pid in _descendants(os.getpid()):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        signal.sigtimedwait({signal.SIGCHLD}, 0.05)


def _exit_as(status: int) -> NoReturn:
    """End this process the way the worker ended, so the pool reports the worker's exit code or signal."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(ImportError, OSError, ValueError):
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        with contextlib.suppress(OSError, ValueError):
            signal.signal(number, signal.SIG_DFL)  # SIGKILL cannot be handled, and needs no reset
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status))


def _descendants(root: int) -> list[int]:
    """Every process below `root` (children, theirs, and so on; zombies included), from /proc; [] without it."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile
        children.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            found.append(child)
            pending.append(child)
    return found


def _limit_processes_and_files(max_processes: int, max_file_size_mb: int) -> None:
    try:
        import resource
    except ImportError:  # not on this platform
        return
    limits = []
    if max_processes > 0 and hasattr(resource, "RLIMIT_NPROC"):
        # The kernel counts every process and thread of the user, not of this
        # worker: the worker may create max_processes more than exist now.
        limits.append((resource.RLIMIT_NPROC, _user_tasks() + max_processes))
    if max_file_size_mb > 0 and hasattr(resource, "RLIMIT_FSIZE"):
        # A write past the limit then fails with EFBIG instead of killing the worker.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        limits.append((resource.RLIMIT_FSIZE, max_file_size_mb * 1024 * 1024))
    for which, wanted in limits:
        _, hard = resource.getrlimit(which)
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (soft, hard))


def _user_tasks() -> int:
    """Processes and threads of this worker's user now (0 where /proc cannot tell)."""
    uid = os.getuid()
    total = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as handle:
                for line in handle:
                    if line.startswith("Threads:"):
                        total += int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue
    return total


def _detach_from_terminal() -> None:
    # Ctrl+C in a terminal signals the whole process group; the parent decides
    # when workers stop, and a worker must not die mid-read on its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            # Killed with the process that forked it (the forkserver), so a
            # parent killed with SIGKILL leaves no orphan workers behind.
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _tame_allocations() -> None:
    # The memory cap counts address space, not resident memory: keep glibc's
    # per-thread arenas (64 MiB reserved each) and BLAS thread pools (large
    # buffers per core) from spending it on reservations. Snippet workers get
    # their parallelism from the pool, not from threads.
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 2)


def _limit_memory(limit_mb: int) -> None:
    """Cap the address space at what the idle worker maps plus `limit_mb`."""
    try:
        import resource
    except ImportError:  # not on this platform; the cap is not enforced
        return
    baseline = _address_space_bytes()
    soft = baseline + limit_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _address_space_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            pages = int(handle.read().split()[0])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _watch_parent(parent_pid: int) -> None:
    initial = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != initial or not _alive(parent_pid):
                # The pool is gone and cannot kill the group: take it (and
                # whatever a snippet forked) down from here.
                with contextlib.suppress(OSError):
                    os.killpg(os.getpid(), signal.SIGKILL)
                os._exit(0)

    threading.Thread(target=watch, name="snippet-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

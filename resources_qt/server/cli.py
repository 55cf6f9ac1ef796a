"""`resource-studio serve PROJECT [--http [HOST:]PORT] [--stdio] [--watch] [--metrics [HOST:]PORT]`: headless."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from resources_qt.address import parse_http_address
from resources_qt.bus.cli import BUS_PASSWORD_FILE_HELP, BUS_PASSWORD_HELP, bus_password
from resources_qt.bus.redis_bus import RedisBus
from resources_qt.bus.urls import BUS_ENV, BusDependencyError, default_channel, redact
from resources_qt.live import LiveData
from resources_qt.notifications import Updated
from resources_qt.project import Project, ProjectError, load_project
from resources_qt.server.auth.access import combined_with_token
from resources_qt.server.engine import ResourceServer
from resources_qt.server.events import ServerEvent, ServerFailed, ServerStarted, SubscriptionAdded, TransportStopped
from resources_qt.server.factory import build_server
from resources_qt.server.logtext import EscapingFormatter
from resources_qt.server.metrics_readers import MeasuredReaders
from resources_qt.server.output_writer import MAX_OUTPUT_FILE_BYTES, OutputFile, OutputWriter
from resources_qt.snippets import SnippetPool, bind_project, snippet_resource
from resources_qt.snippets.binding import READERS, create_readers
from resources_qt.upstream import Upstreams, bind_upstreams, sync_upstreams, upstream_or, watch_subscribed

if TYPE_CHECKING:  # loaded only when --metrics or the OTEL_* variables ask for them
    from resources_qt.server.metrics_http import MetricsListener
    from resources_qt.server.tracing import Tracing
    from resources_qt.snippets.readers import SnippetReaders

__all__ = ["build_parser", "parse_address", "serve_main"]

logger = logging.getLogger(__name__)

PROG = "resource-studio serve"
TOKEN_ENV = "RESOURCE_STUDIO_TOKEN"
METRICS_ENV = "RESOURCE_STUDIO_METRICS"
THREAD_READERS_NOTICE = "Trusted mode: readers run in threads of the server process: no memory or crash containment"


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Serve a Resource Studio project to MCP clients without the window.",
        epilog=f"Give --http, --stdio or both. With both, one server (one catalogue, one snippet pool, one set of "
        f"sessions and notifications) serves the launching stdio client and HTTP clients at once; the process "
        f"ends when the stdio client closes stdin, like every stdio server, since the client that launched it "
        f"owns its lifetime (HTTP sessions end with it). The bearer token may also come from ${TOKEN_ENV}, the "
        f"bus URL from ${BUS_ENV}, the metrics address from ${METRICS_ENV}. With the standard OpenTelemetry "
        f"variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER=otlp, ...) traces are exported over "
        f"OTLP/HTTP (needs the [otel] extra). Logs go to stderr.",
    )
    parser.add_argument("project", help="the project file (.toml)")
    parser.add_argument("--http", metavar="[HOST:]PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp")
    parser.add_argument(
        "--stdio", action="store_true", help="serve the client that launched this process (with --http too: both)"
    )
    parser.add_argument("--token", help="require 'Authorization: Bearer TOKEN' (HTTP; needed off loopback)")
    parser.add_argument("--watch", action="store_true", help="reload the project when the file changes")
    parser.add_argument(
        "--bus",
        metavar="URL",
        help=f"share notifications with the other replicas through Redis: redis://[:PASSWORD@]HOST:PORT/DB "
        f"or rediss://... (default ${BUS_ENV}). {BUS_PASSWORD_HELP}",
    )
    parser.add_argument("--bus-password-file", metavar="FILE", help=BUS_PASSWORD_FILE_HELP)
    parser.add_argument(
        "--bus-channel", metavar="NAME", help="the bus channel (default: resource-studio: + the server name)"
    )
    parser.add_argument(
        "--snippet-output",
        metavar="FILE",
        help="where what snippets print goes: a file (appended; not through a symbolic link; moved to FILE.1 "
        f"before it passes {MAX_OUTPUT_FILE_BYTES // (1024 * 1024)} MiB), or 'off' (default: stderr). One line per "
        "printed line, '[resource uri] stdout: text', with control characters, backslashes and what a shell acts "
        "on ($ ` ; & | < >) written as \\xNN escapes",
    )
    parser.add_argument(
        "--readers",
        choices=READERS,
        help="where reader snippets run (default: the project's [server] readers, else process): 'process', "
        "worker processes with memory, crash and timeout containment; 'thread', threads of the server process, "
        "faster, for trusted projects only: no memory or crash containment, a timed-out snippet runs on",
    )
    parser.add_argument(
        "--metrics",
        metavar="[HOST:]PORT",
        help=f"serve Prometheus metrics at http://HOST:PORT/metrics (default ${METRICS_ENV}; loopback unless "
        "--metrics-public)",
    )
    parser.add_argument(
        "--metrics-public",
        action="store_true",
        help="allow --metrics on a non-loopback address (the metrics have no authentication of their own)",
    )
    parser.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error"], help="stderr log level"
    )
    return parser


def parse_address(text: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT` or `[IPV6]:PORT` -> (host, port); see `resources_qt.address`."""
    try:
        return parse_http_address(text)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None


def _fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr, flush=True)
    return 2


def serve_main(argv: Sequence[str]) -> int:
    """Run the headless server; returns the exit code (2 for usage, project and bind errors)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
        if not args.http and not args.stdio:
            parser.error("one of the arguments --http --stdio is required (or both)")
    except SystemExit as exc:  # argparse has printed the usage error
        return int(exc.code or 0)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(EscapingFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), handlers=[handler])
    if args.token is not None and not args.token.strip():
        # An empty token would silently serve without authentication.
        return _fail("--token must not be empty")
    environment_token = os.environ.get(TOKEN_ENV)
    if args.token is None and environment_token is not None and not environment_token.strip():
        return _fail(f"${TOKEN_ENV} is set but empty; unset it or give a token")
    token = args.token or environment_token or None
    try:
        address = parse_address(args.http) if args.http else None
        if args.stdio and args.token and not args.http:
            raise _UsageError("--token applies to --http only")
        project = load_project(args.project)
        if address is not None:
            _check_authorization(project, token)
        bus = _make_bus(args, project.server.name)
        metrics_address = _metrics_address(args)
        tracing = _start_tracing(project)
    except _UsageError as exc:
        return _fail(str(exc))
    except ProjectError as exc:
        return _fail(str(exc))
    try:
        output_sink = _open_output_sink(args.snippet_output)
    except OSError as exc:
        return _fail(f"--snippet-output: {_one_line(exc)}")
    settings = project.server
    pool = create_readers(project, readers=args.readers)
    # Reader calls timed for the worker histogram and the reader spans; without either, the pool as it is.
    measured = MeasuredReaders(pool) if metrics_address is not None or tracing is not None else None
    served = measured if measured is not None else pool
    threaded = not isinstance(pool, SnippetPool)
    watcher: Any = None
    server: ResourceServer | None = None
    live: LiveData | None = None
    upstreams: Upstreams | None = None
    # SIGTERM and Ctrl+C end serving, so snippet workers are reaped on the way out.
    stop_requested = threading.Event()
    previous_handlers = _stop_on_signals(stop_requested)
    writer: OutputWriter | None = None
    metrics_listener: MetricsListener | None = None
    if output_sink is not None:
        # Queued to a thread: the direct path delivers output on the server loop, which must not wait on a sink.
        writer = OutputWriter(output_sink)
        pool.add_read_output_listener(writer)
    try:
        pool.start()
        resources = bind_project(project, served)
        # Imported resources read through their [[upstreams]]; an upstream's `updated` goes to subscribers here.
        upstreams = bind_upstreams(project, resources, on_updated=lambda uri: _tell_updated(server, uri))
        server = build_server(project, resources)
        server.set_bus(bus)
        if measured is not None:
            measured.attach(server)
        server.tracing = tracing
        if metrics_address is not None:
            try:
                metrics_listener = _listen_metrics(server, pool, metrics_address)
            except OSError as exc:
                return _fail(f"--metrics: {_one_line(exc)}")
        # Data-driven listing and notifications: instances snippets, watched files, interval polling.
        # LiveData names the process pool; it uses only the surface both runners share (SnippetReaders).
        live = LiveData(server, project, cast(SnippetPool, pool))
        live.start()
        failed = threading.Event()

        def observe(event: ServerEvent) -> None:
            # A transport failing while the other keeps serving still makes the exit code say so.
            if isinstance(event, ServerFailed) or (isinstance(event, TransportStopped) and event.message):
                failed.set()
            elif isinstance(event, ServerStarted) and isinstance(pool, SnippetPool):
                # On the server's loop, which serves as long as the pool does: async reads there cross no thread.
                pool.drive_shared_on(asyncio.get_running_loop())
            elif isinstance(event, SubscriptionAdded) and server is not None:
                watch_subscribed(server.resources, event.uri)  # an imported template's instance, subscribed upstream

        server.add_observer(observe)
        if args.watch:
            from resources_qt.server.watch import ProjectWatcher

            watcher = ProjectWatcher(
                Path(args.project),
                server=server,
                project=project,
                make=upstream_or(lambda spec: snippet_resource(spec, served), upstreams),
                set_prelude=pool.set_prelude,
                on_reload=live.set_project,
                # An upstream declared by the edit is connected before its imported resources are made.
                before_apply=lambda new: sync_upstreams(upstreams, new) if upstreams is not None else None,
            )
        if address is not None:
            try:
                url = server.start_http(address[0], address[1], token=token)
            except (OSError, ValueError) as exc:
                return _fail(_one_line(exc))
            print(f"Serving {settings.name!r} at {url}", file=sys.stderr, flush=True)
            _print_metrics(metrics_listener)
            if threaded:  # after the URL line: scripts read the address off the first line
                print(THREAD_READERS_NOTICE, file=sys.stderr, flush=True)
            if settings.auth is not None:
                print(f"Accepting OAuth access tokens of {settings.auth.issuer} for {settings.auth.resource}",
                      file=sys.stderr, flush=True)  # fmt: skip
            _settle_heap()
            if bus is not None:
                shared = f"Sharing notifications on {redact(bus.url)} channel {bus.channel!r}"
                print(shared, file=sys.stderr, flush=True)
            if watcher is not None:
                watcher.start()
            if args.stdio:
                # The launching client owns the process: when it leaves, HTTP ends too.
                server.serve_stdio(until=stop_requested)
            else:
                _wait_until_stopped(server, stop_requested)
        else:
            _print_metrics(metrics_listener)
            if threaded:
                print(THREAD_READERS_NOTICE, file=sys.stderr, flush=True)
            if watcher is not None:
                watcher.start()
            _settle_heap()
            server.serve_stdio(until=stop_requested)
        return 1 if failed.is_set() else 0
    except KeyboardInterrupt:
        return 0
    finally:
        for number, previous in previous_handlers.items():
            signal.signal(number, previous)
        if watcher is not None:
            watcher.stop()
        if live is not None:
            live.close()
        if server is not None:
            server.close()
        if upstreams is not None:
            upstreams.close()
        if metrics_listener is not None:
            metrics_listener.close()
        if tracing is not None:
            tracing.shutdown()
        pool.close()
        if writer is not None:
            writer.close()
        if output_sink is not None and output_sink is not sys.stderr:
            output_sink.close()


def _tell_updated(server: ResourceServer | None, uri: str) -> None:
    if server is not None:
        server.submit(server.notify(Updated(uri)))


def _check_authorization(project: Project, token: str | None) -> None:
    """`[server.auth]` and a static token are refused together; scopes without `[server.auth]` are warned of."""
    try:
        combined_with_token(project.server.auth, token)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    scoped = [spec.name for spec in project.resources if spec.scopes]
    if scoped and project.server.auth is None:
        logger.warning(
            "%d resources declare scopes (%s) but the project has no [server.auth]: every HTTP client sees them",
            len(scoped), ", ".join(scoped[:5]) + (", ..." if len(scoped) > 5 else ""),
        )  # fmt: skip


def _metrics_address(args: argparse.Namespace) -> tuple[str, int] | None:
    """Where `--metrics` (or $RESOURCE_STUDIO_METRICS) serves, checked against `--metrics-public`; None: nowhere."""
    given = args.metrics if args.metrics is not None else os.environ.get(METRICS_ENV)
    if given is None or not given.strip():
        if args.metrics_public:
            raise _UsageError(f"--metrics-public needs --metrics (or ${METRICS_ENV})")
        return None
    source = "--metrics" if args.metrics is not None else f"${METRICS_ENV}"
    try:
        host, port = parse_http_address(given.strip())
        from resources_qt.server.metrics_http import check_metrics_bind

        check_metrics_bind(host, public=args.metrics_public)
    except ValueError as exc:
        raise _UsageError(f"{source}: {str(exc).replace('--http ', '').replace('--metrics: ', '')}") from None
    return host, port


def _start_tracing(project: Project) -> Tracing | None:
    """Traces over OTLP/HTTP when the OTEL_* variables ask for them; without them nothing is imported."""
    from resources_qt.server.tracing import TracingDependencyError, TracingSetupError, traces_requested

    try:
        if not traces_requested():
            return None
        from resources_qt.server.tracing import start_tracing

        return start_tracing(service_name=project.server.name, service_version=project.server.version)
    except (TracingSetupError, TracingDependencyError) as exc:
        raise _UsageError(str(exc)) from None


def _listen_metrics(server: ResourceServer, pool: SnippetReaders, address: tuple[str, int]) -> MetricsListener:
    """/metrics of `server` (its gauges reporting `pool`) at `address`, on the listener's own threads."""
    from resources_qt.server.metrics_http import MetricsListener

    return MetricsListener(server.enable_metrics(readers=pool).registry, *address)


def _print_metrics(listener: MetricsListener | None) -> None:
    if listener is not None:
        print(f"Metrics at {listener.url}", file=sys.stderr, flush=True)


def _open_output_sink(where: str | None) -> TextIO | OutputFile | None:
    """stderr by default (stdout is the protocol's with --stdio), a file appended to, or None for 'off'."""
    if where is None:
        return sys.stderr
    if where == "off":
        return None
    return OutputFile(where)  # kept open while serving, closed at exit; OutputFileError says why not


def _make_bus(args: argparse.Namespace, server_name: str) -> RedisBus | None:
    """The RedisBus `--bus` (or $RESOURCE_STUDIO_BUS) asks for, not started; None without one."""
    url = args.bus or os.environ.get(BUS_ENV) or None
    if url is None:
        for flag, given in (("--bus-channel", args.bus_channel), ("--bus-password-file", args.bus_password_file)):
            if given:
                raise _UsageError(f"{flag} needs --bus (or ${BUS_ENV})")
        return None
    try:
        password = bus_password(args.bus, args.bus_password_file, warn=logger.warning)
        channel = args.bus_channel or default_channel(server_name)
        return RedisBus(url, channel=channel, password=password)
    except BusDependencyError as exc:
        raise _UsageError(f"--bus: {exc}") from None
    except ValueError as exc:
        source = "--bus" if args.bus else f"${BUS_ENV}"
        raise _UsageError(str(exc) if str(exc).startswith("--") else f"{source}: {exc}") from None


def _settle_heap() -> None:
    # Everything imported and built to serve lives as long as the process: out of the collector's
    # sight, a full collection under load walks only what requests made, instead of the whole SDK,
    # pydantic's schemas and the catalogue (tens of milliseconds added to some reads' latency).
    gc.collect()
    gc.freeze()


def _stop_on_signals(stop_requested: threading.Event) -> dict[int, Any]:
    """Make SIGTERM and SIGINT set `stop_requested`; returns the handlers they replace.

    The handler only sets the event: a KeyboardInterrupt raised from a signal handler is lost when it lands
    in a weakref callback or a `__del__` ("Exception ignored in ..."), which left serve running after the
    first SIGTERM until something killed it.
    """

    def request_stop(number: int, frame: object) -> None:
        stop_requested.set()

    return {number: signal.signal(number, request_stop) for number in (signal.SIGTERM, signal.SIGINT)}


def _wait_until_stopped(server: ResourceServer, stop_requested: threading.Event) -> None:
    while server.is_running and not stop_requested.wait(0.25):
        pass


def _one_line(exc: BaseException) -> str:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return " ".join(text.split())

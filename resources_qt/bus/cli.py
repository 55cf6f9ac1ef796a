"""`resource-studio notify --bus URL updated URI... | list-changed`: tell every replica's subscribers."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Sequence

from resources_qt.bus.events import BusEvent, BusMessageError, ListChanged, Updated, validate_session_id, validate_uri
from resources_qt.bus.publish import BusUnavailableError, publish_once
from resources_qt.bus.urls import (
    BUS_ENV,
    CHANNEL_ENV,
    MAX_PASSWORD_FILE_BYTES,
    BusDependencyError,
    check_bus_url,
    check_password,
    default_channel,
    read_password_file,
    url_has_password,
)

__all__ = ["BUS_PASSWORD_FILE_HELP", "BUS_PASSWORD_HELP", "build_parser", "bus_password", "notify_main"]

PROG = "resource-studio notify"

BUS_PASSWORD_HELP = (
    f"A password in --bus shows in the process list (ps): put the URL in ${BUS_ENV} or the password in a file "
    "for --bus-password-file. Logs and messages never show it"
)
BUS_PASSWORD_FILE_HELP = (
    f"read the bus password from FILE (one line, at most {MAX_PASSWORD_FILE_BYTES} bytes; the URL then carries "
    "none): --bus redis://HOST:PORT/DB --bus-password-file /run/secrets/redis"
)
_ON_COMMAND_LINE = (
    f"the bus password is on the command line, where other local users can read it (ps); put the URL in "
    f"${BUS_ENV} or the password in a file for --bus-password-file"
)


def bus_password(command_line_url: str | None, password_file: str | None, *,
                 warn: Callable[[str], object]) -> str | None:
    """The password `--bus-password-file` holds (None without one); `warn` hears once of a password in argv."""
    if command_line_url:
        with contextlib.suppress(ValueError):  # a malformed URL is reported where it is used
            if url_has_password(command_line_url):
                warn(_ON_COMMAND_LINE)
    if password_file is None:
        return None
    try:
        return read_password_file(password_file)
    except ValueError as exc:
        raise ValueError(f"--bus-password-file: {exc}") from None


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Publish a resource notification to every replica of `serve --bus` sharing a channel.",
        epilog=f"The bus URL may come from ${BUS_ENV}, the channel from ${CHANNEL_ENV}. Exit 0: published; "
        "1: the bus is unreachable; 2: usage error.",
    )
    parser.add_argument("--bus", metavar="URL",
                        help=f"redis://[:PASSWORD@]HOST:PORT/DB (default ${BUS_ENV}). {BUS_PASSWORD_HELP}")
    parser.add_argument("--bus-password-file", metavar="FILE", help=BUS_PASSWORD_FILE_HELP)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--channel", help="the channel the replicas use (serve's --bus-channel)")
    target.add_argument("--server-name", metavar="NAME",
                        help="derive the channel from the project's server name, as serve does by default")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for Redis (default 5)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{updated,list-changed}")
    updated = commands.add_parser("updated", help="notifications/resources/updated for each URI")
    updated.add_argument("uris", nargs="+", metavar="URI")
    updated.add_argument("--session", metavar="ID", help="only the subscriber with this session id")
    commands.add_parser("list-changed", help="notifications/resources/list_changed")
    return parser


def _channel(args: argparse.Namespace) -> str:
    if args.channel:
        return str(args.channel)
    if args.server_name:
        try:
            return default_channel(args.server_name)
        except ValueError as exc:
            raise _UsageError(str(exc)) from None
    from_env = os.environ.get(CHANNEL_ENV)
    if from_env:
        return from_env
    raise _UsageError(f"give --channel or --server-name (or set ${CHANNEL_ENV})")


def _events(args: argparse.Namespace) -> tuple[list[BusEvent], str | None]:
    if args.command == "list-changed":
        return [ListChanged()], None
    try:
        uris = [validate_uri(uri, "URI") for uri in args.uris]
        session = validate_session_id(args.session, "--session") if args.session is not None else None
    except BusMessageError as exc:
        raise _UsageError(str(exc)) from None
    return [Updated(uri) for uri in dict.fromkeys(uris)], session


def notify_main(argv: Sequence[str]) -> int:
    """Publish and return the exit code: 0 published, 1 bus unreachable, 2 usage (one line on stderr)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:  # argparse has printed the usage error
        return int(exc.code or 0)
    try:
        url = args.bus or os.environ.get(BUS_ENV) or ""
        if not url:
            raise _UsageError(f"give --bus URL (or set ${BUS_ENV})")
        try:
            url = check_bus_url(url)
            password = bus_password(args.bus, args.bus_password_file,
                                    warn=lambda text: print(f"{PROG}: warning: {text}", file=sys.stderr, flush=True))
            check_password(url, password)
        except ValueError as exc:
            raise _UsageError(str(exc)) from None
        if not args.timeout > 0:
            raise _UsageError("--timeout: must be positive")
        channel = _channel(args)
        events, session = _events(args)
        receivers = asyncio.run(
            publish_once(url, channel=channel, events=events, session_id=session, timeout=args.timeout,
                         password=password)
        )
    except _UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr, flush=True)
        return 2
    except BusDependencyError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr, flush=True)
        return 2
    except BusUnavailableError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr, flush=True)
        return 1
    for event, count in zip(events, receivers, strict=True):
        what = f"updated {event.uri}" if isinstance(event, Updated) else "list_changed"
        target = f" for session {session}" if session else ""
        print(f"Published {what}{target} on {channel!r} ({count} replica{'s' if count != 1 else ''} listening)",
              flush=True)
    return 0

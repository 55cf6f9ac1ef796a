"""The `resource-studio` command: the window by default (`connect` opens it connected to another server);
`serve`, `test`, `lint`, `schema` and `notify` run headless.

Qt is imported only when the window is opened, so `--help`, `--version` and
`serve` start fast and work on machines without a display.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from resources_qt import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="resource-studio",
        description="Design and live-serve MCP resources. Without a command, opens the studio window.",
        epilog="'resource-studio connect --help' opens the window connected to another MCP server. "
        "Headless commands: 'resource-studio serve --help' (serve a project), 'resource-studio test --help' "
        "(run a project's resource tests), 'resource-studio lint --help' (check what resources declare against what "
        "they serve), 'resource-studio schema' (the project file's JSON Schema), 'resource-studio notify --help' "
        "(notify a fleet through its bus).",
    )
    parser.add_argument("--version", action="version", version=f"resource-studio {__version__}")
    parser.add_argument("project", nargs="?", help="project file to open (default: the bundled example)")
    parser.add_argument("--http", metavar="[HOST:]PORT", help="start serving over Streamable HTTP at once")
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="serve the MCP client that launched the studio over stdin/stdout (HTTP can serve beside it)",
    )
    parser.add_argument(
        "--theme", choices=("system", "light", "dark"), help="the theme for this run (View > Theme remembers one)"
    )
    return parser


def build_connect_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="resource-studio connect",
        description="Open the studio window connected to another MCP server (the Remote page): read, subscribe "
        "to and import its resources.",
    )
    parser.add_argument("target", help="a Streamable HTTP URL (http://host:port/mcp) or a stdio command line "
                        "(quoted: 'python server.py')")  # fmt: skip
    parser.add_argument("--token", default="", help="a bearer token for the URL; shown by ps, so prefer "
                        "$RESOURCE_STUDIO_REMOTE_TOKEN")  # fmt: skip
    parser.add_argument("--era", choices=("auto", "handshake", "2026-07-28"), default="auto",
                        help="the protocol era: discover and fall back (auto), the initialize handshake, or 2026-07-28")
    parser.add_argument("--project", help="project file to open beside it (default: the last one)")
    parser.add_argument("--theme", choices=("system", "light", "dark"), help="the theme for this run")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "serve":
        from resources_qt.server.cli import serve_main

        return serve_main(args[1:])
    if args and args[0] == "test":
        from resources_qt.testing.cli import test_main

        return test_main(args[1:])
    if args and args[0] == "lint":
        from resources_qt.lint.cli import lint_main

        return lint_main(args[1:])
    if args and args[0] == "schema":
        from resources_qt.lint.cli import schema_main

        return schema_main(args[1:])
    if args and args[0] == "notify":
        from resources_qt.bus.cli import notify_main

        return notify_main(args[1:])
    if args and args[0] == "connect":
        import os

        from studio.app import run_app

        wanted = build_connect_parser().parse_args(args[1:])
        token = wanted.token or os.environ.get("RESOURCE_STUDIO_REMOTE_TOKEN", "")
        return run_app(project=wanted.project, theme=wanted.theme, remote=(wanted.target, token, wanted.era))
    options = build_parser().parse_args(args)
    from studio.app import run_app

    return run_app(project=options.project, http=options.http, stdio=options.stdio, theme=options.theme)

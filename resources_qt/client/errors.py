"""What goes wrong talking to a remote server, as one line a user can act on (never a traceback)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ConnectContext", "RemoteError", "describe", "leaf_error"]


class RemoteError(Exception):
    """A client-mode failure with the one line to show: `message`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ConnectContext:
    """What the connection knew when it failed, so the line can say more than the SDK's exception."""

    target: str
    http_status: int | None = None
    """The last HTTP error status the server answered (401, 403, 404…), if any."""
    had_token: bool = False
    stderr_tail: str = ""
    """The last lines a stdio child wrote to stderr."""
    exit_code: int | None = None


def leaf_error(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups: the SDK's task groups wrap what failed."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException, context: ConnectContext) -> str:
    """One line for `exc`, raised while connected (or connecting) to `context.target`."""
    import httpx2
    from mcp.shared.exceptions import MCPError

    error = leaf_error(exc)
    target = context.target
    if isinstance(error, RemoteError):
        return error.message
    status = context.http_status
    if status == 401:
        if context.had_token:
            return f"{target} refused the bearer token (401 Unauthorized)"
        return f"{target} needs a bearer token (401 Unauthorized)"
    if status == 403:
        return f"{target} refused access with this token (403 Forbidden)"
    if isinstance(error, httpx2.ConnectError):
        return f"Cannot reach {target}: nothing answers there (connection refused or unknown host)"
    if isinstance(error, httpx2.TimeoutException):
        return f"{target} did not answer in time ({type(error).__name__})"
    if isinstance(error, httpx2.HTTPError):
        return f"{target}: HTTP failed: {error}"
    if isinstance(error, FileNotFoundError):
        return f"Command not found: {error.filename or target}"
    if isinstance(error, PermissionError):
        return f"Cannot run {error.filename or target}: permission denied"
    if isinstance(error, MCPError):
        if status == 404 or error.message == "Not Found":
            return f"{target}: no MCP endpoint at this address (404 Not Found)"
        if error.message == "Connection closed" and (context.stderr_tail or context.exit_code is not None):
            code = f" with code {context.exit_code}" if context.exit_code is not None else ""
            tail = f": {context.stderr_tail}" if context.stderr_tail else ""
            return f"The command exited{code} before it answered{tail}"
        if error.message == "Connection closed":
            return f"{target} closed the connection before it answered"
        return f"{target}: {error.message} ({error.error.code})"
    if isinstance(error, TimeoutError):
        return f"{target} did not answer in time"
    if isinstance(error, OSError):
        return f"{target}: {error.strerror or error}"
    text = str(error).strip().splitlines()
    return f"{target}: {type(error).__name__}: {text[0] if text else ''}".rstrip(": ")

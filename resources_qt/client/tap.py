"""A transport wrapper that shows every message to and from the remote server to an observer (the traffic log)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Protocol

from mcp.client import Transport
from mcp.shared.message import SessionMessage

from resources_qt.server.events import Direction, Traffic

__all__ = ["REMOTE_SESSION", "TappedTransport"]

logger = logging.getLogger(__name__)

REMOTE_SESSION = "remote"
"""The session id the traffic log shows remote messages under."""

Observer = Callable[[Traffic], None]


class _Receiving(Protocol):
    """What the tap needs of the transport's read stream (the SDK's stream protocols are private)."""

    async def receive(self) -> SessionMessage | Exception: ...

    async def aclose(self) -> None: ...


class _Sending(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...

    async def aclose(self) -> None: ...


def _traffic(direction: Direction, item: SessionMessage) -> Traffic:
    message: dict[str, Any] = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
    method = message.get("method")
    return Traffic(time=datetime.now(UTC), session_id=REMOTE_SESSION, direction=direction,
                   method=method if isinstance(method, str) else "", message=message)  # fmt: skip


class _TappedRead:
    """The read stream, observed: each message received is shown as "in" before the session gets it."""

    def __init__(self, inner: _Receiving, observe: Observer, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._observe = observe
        self._on_end = on_end

    @property
    def last_context(self) -> object:
        # The dispatcher asks the stream for the sender's context; pass the inner stream's through.
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        import anyio

        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()  # the server went away (a stdio child that exited), unless we are closing
            raise
        if isinstance(item, SessionMessage):
            _safely(self._observe, "in", item)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _TappedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _TappedRead:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


class _TappedWrite:
    """The write stream, observed: each message sent is shown as "out"."""

    def __init__(self, inner: _Sending, observe: Observer) -> None:
        self._inner = inner
        self._observe = observe

    async def send(self, item: SessionMessage, /) -> None:
        _safely(self._observe, "out", item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TappedWrite:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


def _safely(observe: Observer, direction: Direction, item: SessionMessage) -> None:
    # An observer's fault must never break the connection it watches.
    try:
        observe(_traffic(direction, item))
    except Exception:
        logger.warning("Remote traffic not logged", exc_info=True)


class TappedTransport:
    """`inner` with every message shown to `observe` (on the client's loop; it must not block)."""

    def __init__(self, inner: Transport, observe: Observer, *, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._observe = observe
        self._on_end = on_end

    async def __aenter__(self) -> tuple[_TappedRead, _TappedWrite]:
        read, write = await self._inner.__aenter__()
        return _TappedRead(read, self._observe, self._on_end), _TappedWrite(write, self._observe)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)

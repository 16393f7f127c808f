"""Ending waits early and quietly: long-polls answer and drain waits say "ask again" as soon as
the server starts to stop, instead of being cancelled at the grace limit; a wait whose client has
hung up ends at once (ClientGoneError) instead of running on for nobody.

Thousands of agents wait at once, so a wait runs in its request's own task, under a deadline that
the shutdown and the client's hang-up bring forward: no task, future or event of its own. The
server says when a connection is lost through `CONNECTION_LOST` in the request's scope; without
it (an ASGI client in a test) a task reads the request's `receive` until it says disconnect.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

T = TypeVar("T")

# The scope key under which the server puts the request's connection (a `LostSignal`).
CONNECTION_LOST = "brupop.connection_lost"


class LostSignal(Protocol):
    """A connection that calls back once it is lost (at once, if it is lost already)."""

    def when_lost(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` (in the event loop) when the connection is lost; returns its undo."""
        ...


class Closing:
    """Set once, when the server begins its shutdown; waits in handlers end early."""

    def __init__(self) -> None:
        self._closed = False
        self._lock = threading.Lock()
        self._waits: set[_Wait] = set()

    @property
    def closed(self) -> bool:
        """The shutdown has begun."""
        return self._closed

    def close(self) -> None:
        """Begin the shutdown: every current and later wait ends at once (thread-safe)."""
        with self._lock:
            self._closed = True
            waits = list(self._waits)
        for wait in waits:
            try:
                wait.loop.call_soon_threadsafe(wait.end)
            except RuntimeError:  # that loop has closed already
                continue

    async def race(
        self,
        awaitable: Awaitable[T],
        timeout: float,
        *,
        receive: Receive | None = None,
        connection: LostSignal | None = None,
    ) -> tuple[bool, T | None]:
        """(True, result) if `awaitable` finished within `timeout` and before the shutdown;
        (False, None) otherwise. ClientGoneError once the client has hung up, when `receive`
        (the request's ASGI receive) or its `connection` is given. `awaitable` is cancelled when
        it loses."""
        wait = _Wait(asyncio.get_running_loop())
        with self._lock:
            closed = self._closed
            if not closed:
                self._waits.add(wait)
        try:
            if closed:
                return False, None
            unwatch = wait.watch(receive, connection)
            try:
                async with asyncio.timeout(timeout) as deadline:
                    wait.deadline = deadline
                    try:
                        return True, await awaitable
                    finally:
                        wait.deadline = None
            finally:
                unwatch()
        except TimeoutError:
            if not deadline.expired():
                raise  # the awaitable's own
        finally:
            with self._lock:
                self._waits.discard(wait)
            _discard(awaitable)
        if wait.gone:
            raise ClientGoneError("the client hung up while waiting")
        return False, None


class _Wait:
    """One wait in its request's task: the deadline it is inside (None before and after), which
    the shutdown or the client's hang-up brings to now, and whether the client hung up."""

    __slots__ = ("deadline", "gone", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.deadline: asyncio.Timeout | None = None
        self.gone = False

    def end(self) -> None:
        """Bring the deadline to now, if the wait is still inside it (in the wait's loop)."""
        deadline = self.deadline
        if deadline is not None and not deadline.expired():
            deadline.reschedule(self.loop.time())

    def hung_up(self) -> None:
        self.gone = True
        self.end()

    def watch(self, receive: Receive | None, connection: LostSignal | None) -> Callable[[], object]:
        """From now on the client's hang-up ends the wait; returns what stops watching. (A plain
        call, not a context manager: every long-poll of a burst passes here.)"""
        connection = connection or _connection(receive)
        if connection is not None:
            return connection.when_lost(self.hung_up)
        if receive is None:
            return _nothing
        reader = asyncio.ensure_future(_hang_up(receive))
        reader.add_done_callback(self._reader_done)

        def unwatch() -> None:
            reader.remove_done_callback(self._reader_done)
            reader.cancel()

        return unwatch

    def _reader_done(self, reader: asyncio.Future[None]) -> None:
        if not reader.cancelled() and reader.exception() is None:
            self.hung_up()


def _nothing() -> None:
    return


def _connection(receive: Receive | None) -> LostSignal | None:
    """The connection `CloseConnectionsMiddleware` attached to the request's receive, if any."""
    connection: LostSignal | None = getattr(receive, "connection", None)
    return connection


def _discard(awaitable: Awaitable[Any]) -> None:
    """Close a coroutine that never ran, or cancel a future that lost (and read its outcome)."""
    if isinstance(awaitable, Coroutine):
        awaitable.close()
    elif isinstance(awaitable, asyncio.Future):
        if not awaitable.done():
            awaitable.cancel()
        elif not awaitable.cancelled():
            awaitable.exception()  # read, so asyncio never reports it as unretrieved


class ClientGoneError(Exception):
    """The client closed its connection while its request was waiting."""


async def _hang_up(receive: Receive) -> None:
    """Returns once the client has hung up (a request body, if any, is read and dropped)."""
    while (await receive())["type"] != "http.disconnect":
        continue


class CloseConnectionsMiddleware:
    """Once shutting down, answers carry `Connection: close`, so clients hang up after reading
    them and the server is not left waiting for idle TLS connections to be closed."""

    def __init__(self, app: ASGIApp, *, closing: Closing) -> None:
        self._app = app
        self._closing = closing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        connection = scope.get(CONNECTION_LOST)
        if connection is not None:
            receive = _ReceiveOn(receive, connection)

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start" and self._closing.closed:
                headers = list(message.get("headers", []))
                headers.append((b"connection", b"close"))
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, send_closing)


class _ReceiveOn:
    """The request's receive, carrying its connection (so that waits hear of a hang-up)."""

    __slots__ = ("_receive", "connection")

    def __init__(self, receive: Receive, connection: LostSignal) -> None:
        self._receive = receive
        self.connection = connection

    async def __call__(self) -> Message:
        return await self._receive()

"""Ending waits early and quietly: long-polls answer and drain waits say "ask again" as soon as
the server starts to stop, instead of being cancelled at the grace limit; a wait whose client has
hung up ends at once (ClientGoneError) instead of running on for nobody."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

T = TypeVar("T")


class Closing:
    """Set once, when the server begins its shutdown; waits in handlers end early."""

    def __init__(self) -> None:
        self._closed = False
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = set()

    @property
    def closed(self) -> bool:
        """The shutdown has begun."""
        return self._closed

    def close(self) -> None:
        """Begin the shutdown: every current and later wait ends at once (thread-safe)."""
        with self._lock:
            self._closed = True
            waiters = list(self._waiters)
        for loop, future in waiters:
            try:
                loop.call_soon_threadsafe(_resolve, future)
            except RuntimeError:  # that loop has closed already
                continue

    async def race(
        self, awaitable: Awaitable[T], timeout: float, *, receive: Receive | None = None
    ) -> tuple[bool, T | None]:
        """(True, result) if `awaitable` finished within `timeout` and before the shutdown;
        (False, None) otherwise. ClientGoneError once the client has hung up, when `receive`
        (the request's ASGI receive) is given. `awaitable` is cancelled when it loses."""
        loop = asyncio.get_running_loop()
        closed: asyncio.Future[None] = loop.create_future()
        work: asyncio.Future[T] = asyncio.ensure_future(awaitable)
        waits: set[asyncio.Future[Any]] = {work, closed}
        gone = asyncio.ensure_future(_hang_up(receive)) if receive is not None else None
        if gone is not None:
            waits.add(gone)
        entry = (loop, closed)
        with self._lock:
            if self._closed:
                closed.set_result(None)
            self._waiters.add(entry)
        try:
            done, _ = await asyncio.wait(waits, timeout=timeout, return_when="FIRST_COMPLETED")
        finally:
            with self._lock:
                self._waiters.discard(entry)
            await _settle(waits)
        if work in done:
            return True, work.result()
        if gone is not None and gone in done:
            raise ClientGoneError("the client hung up while waiting")
        return False, None


class ClientGoneError(Exception):
    """The client closed its connection while its request was waiting."""


async def _hang_up(receive: Receive) -> None:
    """Returns once the client has hung up (a request body, if any, is read and dropped)."""
    while (await receive())["type"] != "http.disconnect":
        continue


async def _settle(futures: set[asyncio.Future[Any]]) -> None:
    """Cancel the unfinished `futures` and let them finish, so none outlives its request."""
    pending = {future for future in futures if not future.done()}
    for future in pending:
        future.cancel()
    if pending:
        await asyncio.wait(pending)
    for future in futures:
        if future.done() and not future.cancelled():
            future.exception()  # read, so asyncio never reports it as unretrieved


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


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

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start" and self._closing.closed:
                headers = list(message.get("headers", []))
                headers.append((b"connection", b"close"))
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, send_closing)

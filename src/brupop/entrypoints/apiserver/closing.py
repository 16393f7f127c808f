"""Shutting down without cutting anyone off mid-wait: long-polls answer and drain waits say
"ask again" as soon as the server starts to stop, instead of being cancelled at the grace limit."""

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

    async def race(self, awaitable: Awaitable[T], timeout: float) -> tuple[bool, T | None]:
        """(True, result) if `awaitable` finished within `timeout` and before the shutdown;
        (False, None) otherwise. `awaitable` is cancelled when it loses."""
        loop = asyncio.get_running_loop()
        closed: asyncio.Future[None] = loop.create_future()
        work: asyncio.Future[T] = asyncio.ensure_future(awaitable)
        both: set[asyncio.Future[Any]] = {work, closed}
        entry = (loop, closed)
        with self._lock:
            if self._closed:
                closed.set_result(None)
            self._waiters.add(entry)
        try:
            done, _ = await asyncio.wait(both, timeout=timeout, return_when="FIRST_COMPLETED")
        finally:
            with self._lock:
                self._waiters.discard(entry)
            closed.cancel()
            if not work.done():
                work.cancel()
        if work in done:
            return True, work.result()
        return False, None


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

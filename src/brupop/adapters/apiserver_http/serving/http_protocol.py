"""uvicorn's httptools protocol with bounds on the request head.

uvicorn with httptools has no limit on the size of a request line and its headers, and no
deadline for them: a client may send 64 MB of headers (all buffered before the app sees any), or
one byte a second forever. This protocol counts the bytes received while a request head is
incomplete and answers 431 past `max_head_bytes`; it closes a connection whose head is not
complete `header_timeout_seconds` after the connection opened or the request began (408 when
part of a request came). A request answered before its body came whole (a refusal) must send
the rest within the same deadline, or the connection is closed. Parser errors and upgrade
attempts log at DEBUG only, so that malformed traffic cannot flood the log.

It also tells a waiting request when its connection is lost (`closing.CONNECTION_LOST` in the
request's scope), so that a long-poll needs no task of its own reading for the hang-up; and it
hands each request to the agents' long-poll lane first (`routes/long_polls.py`), which answers
an authorized long-poll below the ASGI app (see `ParkedPoll`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httptools
import structlog
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from brupop.adapters.apiserver_http.routes.closing import CONNECTION_LOST
from brupop.adapters.apiserver_http.routes.long_polls import Admitted, LongPolls
from brupop.adapters.apiserver_http.serving.parked_polls import ParkedPoll, answer_bytes

log = structlog.get_logger(__name__)

# After a refusal, what the client still sends is read and dropped for this long before the
# connection is closed: closing with unread data would reset it, and the client would lose the
# answer it has not read yet.
LINGER_SECONDS = 1.0


class _Pipeline(list[Any]):
    """uvicorn's queue of requests that came while one was in flight (it adds on the left and
    takes from the right), as a list: an empty deque holds a 64-slot block, 760 bytes against
    56, in each of thousands of open connections."""

    __slots__ = ()

    def appendleft(self, item: Any) -> None:
        self.insert(0, item)


@dataclass(frozen=True)
class HeadLimits:
    """How large and how slow a request head may be."""

    max_head_bytes: int = 64 * 1024
    header_timeout_seconds: float = 5.0


class BoundedHttpProtocol(HttpToolsProtocol):
    """HttpToolsProtocol refusing request heads that are too large (431) or too slow (408)."""

    # In slots, not in the instance's dict: uvicorn sets 28 attributes, and with 8 more the
    # dict outgrows the keys shared between instances (30 at most) and takes a table of its
    # own, about 1.3 KiB more for each of thousands of open connections.
    __slots__ = (
        "_body_deadline",
        "_head_begun",
        "_head_bytes",
        "_head_deadline",
        "_limits",
        "_long_polls",
        "_lost",
        "_on_lost",
        "_refused",
    )

    def __init__(
        self, *args: Any, limits: HeadLimits, long_polls: LongPolls | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.pipeline = _Pipeline()  # type: ignore[assignment]
        self._limits = limits
        self._long_polls = long_polls
        self._head_bytes = 0
        self._head_deadline: asyncio.TimerHandle | None = None
        self._body_deadline: asyncio.TimerHandle | None = None  # an answered request's body
        self._head_begun = False  # a request began in this chunk, its deadline not yet set
        self._refused = False
        self._lost = False
        self._on_lost: list[Callable[[], None]] = []

    def when_lost(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` once the connection is lost (soon, if it is lost already); returns a
        function that cancels the call."""
        if self._lost:
            handle = self.loop.call_soon(callback)
            return handle.cancel
        self._on_lost.append(callback)
        return lambda: self._forget(callback)

    def _forget(self, callback: Callable[[], None]) -> None:
        if callback in self._on_lost:
            self._on_lost.remove(callback)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        # The flow control's Event keeps its waiters in a deque (760 bytes empty); it only
        # appends, removes and walks them, which a list does in 56.
        self.flow._is_writable_event._waiters = []  # type: ignore[assignment]
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting_for_head()
        if self._body_deadline is not None:
            self._body_deadline.cancel()
        self._lost = True
        callbacks, self._on_lost = self._on_lost, []
        super().connection_lost(exc)
        for callback in callbacks:
            callback()
        # Two references back to this protocol would make a closed connection a cycle, kept
        # with its TLS state until a full collection (after a connect storm, a thousand
        # connections' worth): the keep-alive timer's handler, which uvicorn cancels only when
        # the connection ended without an error, and the request's scope, which names it.
        self._unset_keepalive_if_required()
        if self.scope is not None:
            self.scope.pop(CONNECTION_LOST, None)  # type: ignore[misc]

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        self._unset_keepalive_if_required()
        if self._head_deadline is not None:
            self._head_bytes += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # No protocol to upgrade to: the request is answered as a plain one, as uvicorn does.
            log.debug("http.upgrade_ignored", client=_client(self.client))
        except httptools.HttpParserError as error:
            log.debug("http.invalid_request", client=_client(self.client), error=str(error))
            self._refuse(400, b"invalid HTTP request")
            return
        if self._head_begun:
            # A request began in this chunk and its head is not complete: it has until its
            # deadline from now, and this chunk is part of it (a 408, not a silent close, if
            # it is late). A head that came whole in one chunk, as a client's next request on
            # a kept-alive connection does, never needed a timer.
            self._head_begun = False
            self._await_head()
            self._head_bytes = len(data)
        # Checked after the parser ran: a chunk that completes the head is never refused.
        if self._head_deadline is not None and self._head_bytes > self._limits.max_head_bytes:
            log.debug("http.head_too_large", client=_client(self.client), bytes=self._head_bytes)
            self._refuse(431, b"request line and headers too large")

    def on_headers_complete(self) -> None:
        self._head_begun = False
        self._stop_waiting_for_head()
        if self._park_long_poll():
            return
        scope = self.scope
        super().on_headers_complete()
        # The request's task has not run yet: it sees this in its scope.
        scope[CONNECTION_LOST] = self  # type: ignore[literal-required]

    def on_message_begin(self) -> None:
        self._unset_keepalive_if_required()  # a request began: the connection is not idle
        super().on_message_begin()
        if self._head_deadline is None:
            self._head_begun = True  # its deadline is set after the chunk, if still incomplete

    def on_message_complete(self) -> None:
        super().on_message_complete()
        if self._body_deadline is not None:  # the rest of an answered request's body came
            self._body_deadline.cancel()
            self._body_deadline = None
            super().on_response_complete()  # on as uvicorn goes after a response

    def on_response_complete(self) -> None:
        cycle = self.cycle
        if cycle is not None and cycle.response_complete and cycle.more_body:
            # Answered before its body came whole, a refusal most likely: the rest must come
            # within the head's deadline. uvicorn waits for it with none, each byte putting off
            # its keep-alive timeout, so a client trickling the body of a refused request would
            # keep the connection for as long as it liked.
            self._body_deadline = self.loop.call_later(
                self._limits.header_timeout_seconds, self._body_too_slow
            )
            return
        super().on_response_complete()

    def _body_too_slow(self) -> None:
        self._body_deadline = None
        log.debug("http.body_too_slow", client=_client(self.client))
        self._refused = True
        if not self.transport.is_closing():
            self.transport.close()

    def _park_long_poll(self) -> bool:
        """Hand the request to the long-poll lane, if it is a long-poll the lane answers and no
        answer is in progress on this connection; True when the lane took it."""
        polls, parser = self._long_polls, self.parser
        if polls is None or (self.cycle is not None and not self.cycle.response_complete):
            return False
        if parser.get_method() != b"GET" or parser.get_http_version() != "1.1":
            return False
        if not parser.should_keep_alive() or parser.should_upgrade():
            return False
        poll = polls.admit(self.url, self.headers)
        if poll is None:
            return False
        # The lane has read what it needs: the request's head is not kept while it waits (the
        # token alone is about a kilobyte; the next request makes them anew).
        self.url, self.headers, self.scope = b"", [], None  # type: ignore[assignment]
        parked = ParkedPoll()
        self.cycle = parked  # type: ignore[assignment]
        task = self.loop.create_task(self._answer_parked(polls, poll, parked))
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)
        return True

    async def _answer_parked(self, polls: LongPolls, poll: Admitted, parked: ParkedPoll) -> None:
        """Wait in the lane, write its answer, then go on as uvicorn does after a response."""
        answer = await polls.answer(poll, self)
        keep_alive = parked.keep_alive and not polls.closing
        if answer.body and not parked.disconnected and not self.transport.is_closing():
            defaults = self.server_state.default_headers
            self.transport.write(answer_bytes(answer, defaults, keep_alive=keep_alive))
        parked.response_complete = True
        if not keep_alive:
            self.transport.close()
        self.on_response_complete()

    def _await_head(self) -> None:
        self._head_bytes = 0
        self._head_deadline = self.loop.call_later(
            self._limits.header_timeout_seconds, self._head_too_slow
        )

    def _stop_waiting_for_head(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        log.debug("http.head_too_slow", client=_client(self.client), bytes=self._head_bytes)
        if self._head_bytes:
            self._refuse(408, b"request headers not received in time")
        elif not self.transport.is_closing():
            self._refused = True
            self.transport.close()

    def _refuse(self, status: int, reason: bytes) -> None:
        """Answer `status` with a short reason, then close the connection (see LINGER_SECONDS)."""
        self._refused = True
        self._stop_waiting_for_head()
        if self.transport.is_closing():
            return
        self.transport.write(
            b"".join(
                [
                    STATUS_LINE[status],
                    b"content-type: text/plain; charset=utf-8\r\n",
                    b"content-length: %d\r\n" % len(reason),
                    b"connection: close\r\n\r\n",
                    reason,
                ]
            )
        )
        self.loop.call_later(LINGER_SECONDS, self._close)

    def _close(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()


def _client(address: tuple[str, int] | None) -> str | None:
    return f"{address[0]}:{address[1]}" if address else None

"""Admitting TCP connections: bounds on how many are open (per listener, per source address, with
a reserve for probes: `slots.py`), a TLS handshake deadline, and small TLS buffers.

asyncio's own TLS server gives every accepted connection a 256 KiB read buffer before the
handshake starts and waits 60 s for the handshake: 1,000 connections that never start TLS hold
more memory than the apiserver's limit. Here the listening server speaks plain TCP; each accepted
connection is refused at once when its listener has no slot for it; else its TLS state is made
when the client's first bytes arrive (a connection that sends nothing costs about a kilobyte),
and the handshake must end within `handshake_timeout_seconds` of the connection (within
`RESERVE_SECONDS` for a reserve connection). The HTTP protocol sees only connections whose
handshake ended, and knows whether the connection is a reserve one.

asyncio's TLS protocol reads the socket into a buffer of its own per connection and copies what it
read into OpenSSL at once; every connection here shares one `ReadBuffer` instead (the event loop
reads one socket at a time), so a waiting agent's connection holds no read buffer at all.
"""

from __future__ import annotations

import asyncio
import ssl
from asyncio import sslproto
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from brupop.adapters.apiserver_http.serving.slots import (
    ListenerLimits,
    ListenerSlots,
    Slot,
    source_address,
)

log = structlog.get_logger(__name__)

# The shared socket read buffer; and the pieces decrypted data is read in (a TLS record carries at
# most 16 KiB).
SHARED_READ_BUFFER_BYTES = 64 * 1024
TLS_READ_BUFFER_BYTES = 16 * 1024
# A reserve connection (see slots.py) serves one probe: its handshake and its request head must
# each come within this long (the kubelet's probe gives up after 1 s by default).
RESERVE_SECONDS = 2.0


class ReadBuffer:
    """The buffer every TLS connection of one event loop reads its socket into.

    asyncio's selector transport calls `get_buffer`, reads into it and calls `buffer_updated`,
    which copies the bytes into the connection's OpenSSL input at once: nothing is left in the
    buffer when the next connection reads. One per server (one event loop, one thread), shared by
    its listeners."""

    def __init__(self, size: int = SHARED_READ_BUFFER_BYTES) -> None:
        self.bytes = bytearray(size)
        self.view = memoryview(self.bytes)


@dataclass(frozen=True)
class ConnectionLimits:
    """How many connections each listener admits (the agents' port, or the only port; the
    webhook port), per source address and for probes beyond the cap; and how long a TLS
    handshake may take."""

    max_connections: int = 4096
    webhook_max_connections: int = 512
    per_address: int = 64
    probe_reserve: int = 16
    handshake_timeout_seconds: float = 5.0

    def listener(self, *, webhook: bool) -> ListenerLimits:
        """The bounds of the webhook port's listener, or of the agents'."""
        return ListenerLimits(
            max_connections=self.webhook_max_connections if webhook else self.max_connections,
            per_address=self.per_address,
            probe_reserve=self.probe_reserve,
        )


HttpProtocolFactory = Callable[[bool], asyncio.Protocol]


class Admission:
    """Counts one listener's open connections and makes the protocol factory for its server."""

    def __init__(
        self,
        *,
        name: str,
        limits: ListenerLimits,
        handshake_timeout_seconds: float,
        context: Callable[[], ssl.SSLContext],
        http_protocol: HttpProtocolFactory,
        read_buffer: ReadBuffer,
    ) -> None:
        """`http_protocol(reserved)` makes the HTTP protocol of a handshaken connection."""
        self.name = name
        self.slots = ListenerSlots(limits)
        self._handshake_seconds = handshake_timeout_seconds
        self._context = context
        self._http_protocol = http_protocol
        self._open: set[_Doorway | _Tls] = set()
        self._read_buffer = read_buffer
        self.refused = 0

    def protocol(self) -> asyncio.Protocol:
        """The protocol of one accepted TCP connection (the listening server's factory)."""
        return _Doorway(self)

    def hang_up_handshaking(self) -> None:
        """Abort every connection whose TLS handshake has not ended (the server is stopping)."""
        for connection in list(self._open):
            if not (isinstance(connection, _Tls) and connection.handshaken):
                connection.abort()

    def _admit(self, doorway: _Doorway, address: str) -> Slot | None:
        slot = self.slots.take(address)
        if slot is not None:
            self._open.add(doorway)
            return slot
        self.refused += 1
        if self.refused == 1 or self.refused % 1000 == 0:
            limits = self.slots.limits
            log.warning(
                "apiserver.connections_refused",
                listener=self.name,
                full=self.slots.why_full(address),
                refused=self.refused,
                max_connections=limits.max_connections,
                per_address=limits.per_address,
            )
        return None

    def _handshake_limit(self, slot: Slot) -> float:
        if slot.reserved:
            return min(self._handshake_seconds, RESERVE_SECONDS)
        return self._handshake_seconds

    def _start_tls(
        self, doorway: _Doorway, transport: asyncio.Transport, seconds: float, slot: Slot
    ) -> _Tls:
        loop = asyncio.get_running_loop()
        handshake: asyncio.Future[None] = loop.create_future()
        tls = _Tls(
            loop,
            self._http_protocol(slot.reserved),
            self._context(),
            handshake,
            server_side=True,
            ssl_handshake_timeout=seconds,
            ssl_shutdown_timeout=self._handshake_seconds,
        )
        tls.share(self._read_buffer)
        tls.slot = slot
        tls.on_lost = self._open.discard
        self._open.discard(doorway)
        self._open.add(tls)
        handshake.add_done_callback(tls.handshake_ended)
        transport.set_protocol(tls)
        tls.connection_made(transport)
        return tls

    def _forget(self, doorway: _Doorway) -> None:
        self._open.discard(doorway)


class _Doorway(asyncio.Protocol):
    """The first protocol of an accepted connection. Over the limit it hangs up at once; else
    it waits (up to the handshake timeout) for the client's first bytes before it sets up TLS,
    so that a connection that never starts TLS costs no TLS state."""

    def __init__(self, admission: Admission) -> None:
        self._admission = admission
        self._transport: asyncio.Transport | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._opened_at = 0.0
        self._slot: Slot | None = None
        self._handed_over = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._slot = self._admission._admit(
            self, source_address(transport.get_extra_info("peername"))
        )
        if self._slot is None:
            transport.abort()
            return
        loop = asyncio.get_running_loop()
        self._opened_at = loop.time()
        timeout = self._admission._handshake_limit(self._slot)
        self._deadline = loop.call_later(timeout, self.abort)

    def data_received(self, data: bytes) -> None:
        assert self._transport is not None and self._slot is not None
        if self._deadline is not None:
            self._deadline.cancel()
        loop = asyncio.get_running_loop()
        timeout = self._admission._handshake_limit(self._slot)
        left = max(0.1, timeout - (loop.time() - self._opened_at))
        tls = self._admission._start_tls(self, self._transport, left, self._slot)
        self._handed_over = True  # the TLS protocol gives the slot back when it ends
        tls.feed(data)

    def eof_received(self) -> bool:
        return False  # the client gave up before TLS: close

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        if self._slot is not None and not self._handed_over:
            self._slot.release()
        self._admission._forget(self)
        _unhook_reader(self._transport)

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()


class _Tls(sslproto.SSLProtocol):
    """asyncio's TLS protocol over a shared read buffer, telling the admission when it ends."""

    # asyncio reads decrypted data in pieces of `max_size` (and makes a read buffer of that size,
    # replaced by the shared one).
    max_size = TLS_READ_BUFFER_BYTES

    # In slots, not in the instance's dict: asyncio's protocol sets 34 attributes, and past 30
    # the dict leaves the keys shared between instances for a table of its own, about 1.3 KiB
    # more for each of thousands of open connections. A slot named like one of asyncio's
    # attributes holds it (a slot is found before the dict), so the dict keeps the rest.
    __slots__ = (
        "_app_protocol_is_buffer",
        "_app_reading_paused",
        "_app_writing_paused",
        "_eof_received",
        "_incoming_high_water",
        "_incoming_low_water",
        "_outgoing_high_water",
        "_outgoing_low_water",
        "_raw",
        "_ssl_buffer",
        "_ssl_buffer_view",
        "_ssl_reading_paused",
        "_ssl_writing_paused",
        "_write_backlog",
        "_write_buffer_size",
        "handshaken",
        "on_lost",
        "slot",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # asyncio only appends to its backlog, reads, replaces and deletes the first entry and
        # clears it: a list does all that, and an empty deque holds a 64-slot block (760 bytes
        # against 56, for each of thousands of open connections).
        self._write_backlog: list[Any] = []  # type: ignore[assignment]
        self.on_lost: Callable[[_Tls], None] = _nothing
        self.slot: Slot | None = None
        self.handshaken = False
        self._raw: asyncio.Transport | None = None

    def share(self, buffer: ReadBuffer) -> None:
        """Read the socket into `buffer` (shared), dropping the connection's own."""
        self._ssl_buffer = buffer.bytes
        self._ssl_buffer_view = buffer.view

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._raw = transport
        super().connection_made(transport)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self.slot is not None:
            self.slot.release()
        self.on_lost(self)
        super().connection_lost(exc)
        _unhook_reader(self._raw)

    def handshake_ended(self, handshake: asyncio.Future[None]) -> None:
        # A failed or timed-out handshake is the client's problem: read it so asyncio does not
        # report it, and say it only at DEBUG.
        if handshake.cancelled():
            return
        error = handshake.exception()
        if error is None:
            self.handshaken = True
        else:
            log.debug("tls.handshake_failed", error=str(error) or type(error).__name__)

    def feed(self, data: bytes) -> None:
        """Hand over bytes the client sent before this protocol took the connection."""
        view = memoryview(data)
        while view:
            buffer = self.get_buffer(len(view))
            size = min(len(buffer), len(view))
            buffer[:size] = view[:size]
            self.buffer_updated(size)
            view = view[size:]

    def abort(self) -> None:
        if self._raw is not None:
            self._raw.abort()


def _nothing(_tls: _Tls) -> None:
    return


def _unhook_reader(transport: asyncio.BaseTransport | None) -> None:
    """asyncio's socket transport keeps its read callback as a method of itself: once closed it
    is a cycle, left (with its socket) for the collector. No read comes after the loss."""
    if transport is not None:
        transport._read_ready_cb = None  # type: ignore[attr-defined]

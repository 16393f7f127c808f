"""Serving the app over HTTPS with uvicorn: in this thread (`brupop apiserver`) or a background one.

Both reload a renewed certificate without a restart (see `tls.CertificateReloader`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.server import ServerState

from brupop.adapters.apiserver_http.routes.long_polls import LongPolls
from brupop.adapters.apiserver_http.serving.admission import (
    RESERVE_SECONDS,
    Admission,
    ConnectionLimits,
    ReadBuffer,
)
from brupop.adapters.apiserver_http.serving.connections import hang_up_lingering
from brupop.adapters.apiserver_http.serving.http_protocol import BoundedHttpProtocol, HeadLimits
from brupop.adapters.apiserver_http.serving.listeners import ReserveHttpProtocol
from brupop.adapters.apiserver_http.serving.tls import CertificateReloader

GRACEFUL_SHUTDOWN_SECONDS = 10
# How long a closed connection may wait for its client's TLS close before it is hung up.
TLS_CLOSE_GRACE_SECONDS = 1.0
# uvicorn's exit code when the app's lifespan startup fails.
STARTUP_FAILURE = 3


@dataclass(frozen=True)
class ServerLimits:
    """Bounds on connections and request heads (the settings' defaults)."""

    connections: ConnectionLimits = field(default_factory=ConnectionLimits)
    head: HeadLimits = field(default_factory=HeadLimits)


@dataclass
class RunningServer:
    """An apiserver serving in a background thread."""

    server: uvicorn.Server
    thread: threading.Thread
    host: str
    port: int
    certificates: CertificateReloader
    webhook_port: int | None = None

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}"

    def stop(self, grace_seconds: float = 5.0) -> None:
        """Stop accepting requests, answer the waiting ones, hang up, and end the thread.

        Should the thread still run after `grace_seconds` (a request stuck in a cluster call),
        uvicorn is told to exit at once, cutting what is left."""
        self.server.should_exit = True
        self.thread.join(grace_seconds)
        if self.thread.is_alive():
            self.server.force_exit = True
            self.thread.join(grace_seconds)


class _DatedState(ServerState):
    """uvicorn's state shared by the connections, whose default headers are dated when a response
    reads them (once a second at most), instead of by a timer ten times a second."""

    def __init__(self, config: uvicorn.Config) -> None:
        self._config = config
        self._second = -1
        self._headers: list[tuple[bytes, bytes]] = []
        super().__init__()

    @property
    def default_headers(self) -> list[tuple[bytes, bytes]]:
        if not self._config.date_header:
            return list(self._config.encoded_headers)
        now = int(time.time())
        if now != self._second:
            date = (b"date", formatdate(now, usegmt=True).encode())
            self._second, self._headers = now, [date, *self._config.encoded_headers]
        return self._headers

    @default_headers.setter
    def default_headers(self, _headers: list[tuple[bytes, bytes]]) -> None:
        return  # derived from the config and the clock


class _Server(uvicorn.Server):
    """uvicorn over our own TLS admission (see `admission.py`), one per listening socket, and
    bounded HTTP protocol (see `http_protocol.py`); telling the app first when it starts to shut
    down (waits end, answers carry `Connection: close`), and hanging up the connections whose
    clients do not close them. The socket on `webhook_port` is the webhook's listener, any other
    the agents'.

    While it serves, nothing wakes its event loop but the network and the exit being asked
    (`should_exit`, by a signal or from another thread): uvicorn's own loop wakes it ten times a
    second to date its headers and look for the exit."""

    loop: asyncio.AbstractEventLoop | None = None
    _exit_asked: asyncio.Event | None = None
    _should_exit = False

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        certificates: CertificateReloader,
        limits: ServerLimits,
        begin_shutdown: Callable[[], None],
        webhook_port: int | None,
        long_polls: LongPolls | None = None,
    ) -> None:
        super().__init__(config)
        self._long_polls = long_polls
        self.server_state = _DatedState(config)
        self._certificates = certificates
        self._limits = limits
        self._begin_shutdown = begin_shutdown
        self._webhook_port = webhook_port
        self.admissions: list[Admission] = []

    @property
    def should_exit(self) -> bool:
        return self._should_exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        """Ask for the exit (or take it back) from any thread or a signal handler."""
        self._should_exit = value
        loop, asked = self.loop, self._exit_asked
        if value and loop is not None and asked is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed already
                loop.call_soon_threadsafe(asked.set)

    async def main_loop(self) -> None:
        """Serve until the exit is asked."""
        if self._exit_asked is not None and not self.should_exit:
            await self._exit_asked.wait()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._exit_asked = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        if not sockets:
            raise ValueError("the apiserver serves only on sockets it is given (see `bind`)")
        await self.lifespan.startup()
        if self.lifespan.should_exit:
            raise SystemExit(STARTUP_FAILURE)

        loop = asyncio.get_running_loop()
        read_buffer = ReadBuffer()
        self.admissions = [self._admission(sock, read_buffer) for sock in sockets]
        self.servers = [
            await loop.create_server(admission.protocol, sock=sock, backlog=self.config.backlog)
            for admission, sock in zip(self.admissions, sockets, strict=True)
        ]
        self.started = True

    def _admission(self, sock: socket.socket, read_buffer: ReadBuffer) -> Admission:
        """The admission of one listening socket, within its listener's limits."""
        webhook = self._webhook_port is not None and sock.getsockname()[1] == self._webhook_port
        head = self._limits.head
        reserve_head = HeadLimits(
            max_head_bytes=head.max_head_bytes,
            header_timeout_seconds=min(head.header_timeout_seconds, RESERVE_SECONDS),
        )

        def http_protocol(reserved: bool) -> asyncio.Protocol:
            if reserved:
                return ReserveHttpProtocol(
                    config=self.config,
                    server_state=self.server_state,
                    app_state=self.lifespan.state,
                    limits=reserve_head,
                )
            return BoundedHttpProtocol(
                config=self.config,
                server_state=self.server_state,
                app_state=self.lifespan.state,
                limits=head,
                long_polls=None if webhook else self._long_polls,
            )

        connections = self._limits.connections
        return Admission(
            name="webhook" if webhook else "agents",
            limits=connections.listener(webhook=webhook),
            handshake_timeout_seconds=connections.handshake_timeout_seconds,
            context=self._certificates.server_context,
            http_protocol=http_protocol,
            read_buffer=read_buffer,
        )

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._begin_shutdown()
        for admission in self.admissions:
            admission.hang_up_handshaking()
        # uvicorn asks exactly these to close, before its first await.
        asked = set(self.server_state.connections)
        hang_ups = asyncio.create_task(
            hang_up_lingering(
                self.server_state.connections, asked, grace_seconds=TLS_CLOSE_GRACE_SECONDS
            )
        )
        try:
            await super().shutdown(sockets)
        finally:
            hang_ups.cancel()


def uvicorn_server(
    app: Any,
    *,
    certificates: CertificateReloader,
    host: str,
    port: int,
    limits: ServerLimits | None = None,
    webhook_port: int | None = None,
) -> uvicorn.Server:
    """A uvicorn server for `app`, serving TLS from `certificates` within `limits`; it serves
    only on the sockets given to its `run` (see `bind`), the one on `webhook_port` as the
    webhook's listener."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        # The TLS admission (admission.py) wraps asyncio's own transports: no uvloop.
        loop="asyncio",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
    )
    state = getattr(app, "state", None)
    begin_shutdown: Callable[[], None] = getattr(state, "begin_shutdown", None) or _nothing
    return _Server(
        config,
        certificates=certificates,
        limits=limits or ServerLimits(),
        begin_shutdown=begin_shutdown,
        webhook_port=webhook_port,
        long_polls=getattr(state, "long_polls", None),
    )


def _nothing() -> None:
    return


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready socket on host:port (port 0 picks a free one; `::` is dual-stack).

    The protocol is given explicitly: asyncio sets TCP_NODELAY only on sockets whose `proto` is
    TCP, and without it every small response waits ~40 ms for a delayed ACK.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        # Dual-stack whatever the host's default: `::` serves IPv4 clients too.
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.bind((host, port))
    return sock


def serve_in_thread(
    app: Any,
    *,
    certfile: Path,
    keyfile: Path,
    host: str = "127.0.0.1",
    port: int = 0,
    cert_check_seconds: float = 5.0,
    start_timeout_seconds: float = 10.0,
    limits: ServerLimits | None = None,
    webhook_port: int | None = None,
) -> RunningServer:
    """Start serving `app` over HTTPS in a daemon thread; return once it accepts connections.

    With `webhook_port` (a free port: the app must know it, see `listeners.py`) it also listens
    there, as the webhook's listener."""
    certificates = CertificateReloader(certfile, keyfile, check_seconds=cert_check_seconds)
    sockets = [bind(host, port)]
    if webhook_port is not None:
        sockets.append(bind(host, webhook_port))
    server = uvicorn_server(
        app,
        certificates=certificates,
        host=host,
        port=port,
        limits=limits,
        webhook_port=webhook_port,
    )
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": sockets}, name="apiserver", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + start_timeout_seconds
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            for sock in sockets:
                sock.close()
            raise RuntimeError("the apiserver did not start")
        time.sleep(0.01)
    return RunningServer(
        server, thread, host, sockets[0].getsockname()[1], certificates, webhook_port
    )

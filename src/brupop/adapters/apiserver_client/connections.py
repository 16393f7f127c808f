"""Keep-alive connections to one apiserver: sockets (TLS-wrapped) and `http_exchange`.

The agent runs on every node, so its footprint counts: urllib3 would cost it about 1.2 MiB, and
`http.client` about 20 ms of CPU at every start; the few requests the agent makes need neither.

TLS trusts the configured CA file and nothing else. The apiserver's certificate is issued by
brupop's own CA; the system bundle would trust nothing the agent needs and costs about 1.2 MiB
of OpenSSL memory once loaded.
"""

from __future__ import annotations

import io
import os
import select
import socket
import ssl
import threading
import time

from brupop.adapters.apiserver_client.base_url import DEFAULT_PORTS, split_base_url
from brupop.adapters.apiserver_client.http_exchange import (
    AnswerTooLargeError,
    read_answer,
    request_bytes,
)
from brupop.adapters.system.reads_before import ReadsBefore

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import BinaryIO

MAX_IDLE_CONNECTIONS = 2  # the agent's loop and its long-poll, each with a connection kept open


class CaFileError(OSError):
    """The configured CA file cannot be read or holds no usable certificate."""


ResponseTooLargeError = AnswerTooLargeError  # the name the transport knows it by


class _Connection:
    """One open socket to the apiserver and the buffered reader of its answers, each of which
    must come whole before the deadline its exchange sets."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reads = ReadsBefore(sock, deadline=0.0)
        self.reader: BinaryIO = io.BufferedReader(self.reads)

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def trust_only(ca_path: str | os.PathLike[str]) -> ssl.SSLContext:
    """A client context that verifies the server against the CA in `ca_path` alone, name too."""
    try:
        # Given a cafile, create_default_context loads it and leaves the system's CAs out.
        context = ssl.create_default_context(cafile=str(ca_path))
    except (OSError, ValueError) as error:  # ssl.SSLError is an OSError
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        raise CaFileError(f"cannot load the CA file {os.fspath(ca_path)}: {reason}") from None
    return context


class ApiserverConnections:
    """A few reusable connections to the host and port of `base_url` (http or https).

    Each exchange takes a connection for itself, so concurrent callers never share one. A
    connection goes back to the idle set only after its answer was read to the end.
    """

    def __init__(
        self,
        base_url: str,
        ca_path: str | os.PathLike[str],
        *,
        max_idle: int = MAX_IDLE_CONNECTIONS,
    ) -> None:
        parts = split_base_url(base_url)
        self._secure, self._host, self._port = parts.secure, parts.host, parts.port
        self.path_prefix = parts.path_prefix
        host = f"[{self._host}]" if ":" in self._host else self._host  # an IPv6 address
        default_port = DEFAULT_PORTS["https" if self._secure else "http"]
        self._authority = host if self._port == default_port else f"{host}:{self._port}"
        self._ca_path = ca_path
        self._max_idle = max_idle
        self._context: ssl.SSLContext | None = None
        self._idle: list[_Connection] = []
        self._generation = 0
        self._lock = threading.Lock()

    def exchange(
        self,
        method: str,
        target: str,
        *,
        headers: dict[str, str],
        body: bytes | None,
        connect_seconds: float,
        read_seconds: float,
        max_bytes: int,
    ) -> tuple[int, bytes]:
        """Send one request, return its status and body.

        The whole answer must come within `read_seconds` of the request, however slowly its
        bytes trickle in. Raises OSError (ssl.SSLError and timeouts included) or BadAnswerError
        when the exchange fails, and ResponseTooLargeError when the body is longer than
        `max_bytes`.
        """
        connection, generation = self._take(connect_seconds)
        reusable = False
        try:
            connection.reads.deadline = time.monotonic() + read_seconds
            connection.sock.settimeout(read_seconds)  # connect and TLS used connect_seconds
            connection.sock.sendall(request_bytes(method, target, self._authority, headers, body))
            status, data, reusable = read_answer(connection.reader, max_bytes)
            return status, data
        finally:
            if reusable:
                self._give_back(connection, generation)
            else:
                connection.close()

    def drop_all(self) -> None:
        """Close the idle connections, retire the busy ones, and read the CA file again."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._generation += 1
            self._context = None
        for connection in idle:
            connection.close()

    def _take(self, connect_seconds: float) -> tuple[_Connection, int]:
        with self._lock:
            generation = self._generation
            while self._idle:
                connection = self._idle.pop()
                if not _dropped(connection):
                    return connection, generation
                connection.close()
            context = self._tls_context() if self._secure else None
        connection = self._open(context, connect_seconds)
        return connection, generation

    def _open(self, context: ssl.SSLContext | None, connect_seconds: float) -> _Connection:
        # TCP, then the TLS handshake: both bounded by connect_seconds.
        name = resolver_name(self._host)
        # The resolver takes bytes as they are (typeshed says str only).
        address = (name, self._port)
        sock = socket.create_connection(address, timeout=connect_seconds)  # type: ignore[arg-type]
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if context is not None:
                sock = context.wrap_socket(sock, server_hostname=name)
        except BaseException:
            sock.close()
            raise
        return _Connection(sock)

    def _tls_context(self) -> ssl.SSLContext:
        if self._context is None:
            self._context = trust_only(self._ca_path)
        return self._context

    def _give_back(self, connection: _Connection, generation: int) -> None:
        with self._lock:
            if generation == self._generation and len(self._idle) < self._max_idle:
                self._idle.append(connection)
                return
        connection.close()


def resolver_name(host: str) -> bytes | str:
    """An ASCII host name as bytes, which `socket` and `ssl` take as it is; any other as text,
    which they encode with the IDNA codec. Loading that codec (and stringprep's tables) costs the
    agent about 13 ms of CPU, and about 100 ms where its bytecode cannot be written."""
    return host.encode("ascii") if host.isascii() else host


def _dropped(connection: _Connection) -> bool:
    """Whether an idle connection was closed by the server (or has bytes nobody asked for)."""
    poller = select.poll()
    poller.register(connection.sock, select.POLLIN)
    return bool(poller.poll(0))

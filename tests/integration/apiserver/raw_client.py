"""Raw sockets to the apiserver, for requests no well-behaved HTTP client would send."""

from __future__ import annotations

import socket
import ssl
import time
import urllib.request
from pathlib import Path

from tests.support.polling import first_answer


def tcp_connection(port: int, host: str = "127.0.0.1", source: str | None = None) -> socket.socket:
    """A plain TCP connection that never starts TLS (from the loopback address `source`)."""
    return socket.create_connection(
        (host, port), timeout=5, source_address=(source, 0) if source else None
    )


def tls_connection(
    port: int, ca_path: Path, host: str = "127.0.0.1", source: str | None = None
) -> ssl.SSLSocket:
    """A TLS connection, handshake done."""
    context = ssl.create_default_context(cafile=str(ca_path))
    return context.wrap_socket(tcp_connection(port, host, source), server_hostname="localhost")


def send_all(connection: socket.socket, data: bytes) -> bool:
    """Send `data`; False if the server closed the connection before it was all sent."""
    try:
        connection.sendall(data)
    except OSError:
        return False
    return True


def read_until_closed(connection: socket.socket, timeout: float = 10.0) -> bytes:
    """Everything the server sends until it closes the connection; TimeoutError if it keeps it
    open longer than `timeout`."""
    deadline = time.monotonic() + timeout
    received = b""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"the connection is still open after {timeout} s")
        connection.settimeout(remaining)
        try:
            chunk = connection.recv(65536)
        except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
            return received
        except TimeoutError:
            raise TimeoutError(f"the connection is still open after {timeout} s") from None
        if not chunk:
            return received
        received += chunk


def ping_on(connection: socket.socket) -> bytes:
    """One /ping on an open connection, its whole answer read; the connection stays open."""
    connection.sendall(b"GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
    answer = b""
    while not answer.endswith(b"pong"):
        chunk = connection.recv(4096)
        if not chunk:
            raise ConnectionError(f"closed before the answer ended: {answer[:200]!r}")
        answer += chunk
    return answer


def ping(port: int, ca_path: Path) -> bytes:
    context = ssl.create_default_context(cafile=str(ca_path))
    with urllib.request.urlopen(
        f"https://localhost:{port}/ping", context=context, timeout=5
    ) as response:
        body: bytes = response.read()
        return body


def ping_soon(port: int, ca_path: Path, within: float = 20.0) -> bytes:
    """`GET /ping`'s body, once the server answers."""
    return first_answer(lambda: ping(port, ca_path), "GET /ping", seconds=within)

"""A loopback TLS server that answers what a test scripts, for answers the real app never gives
(too long, none at all, a connection closed under the client).
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable

from tests.support.tls import TestCertificates

Handler = Callable[[socket.socket], None]


class RawHttpsServer:
    """Runs `handle` on every accepted connection, after the TLS handshake unless told not to."""

    def __init__(
        self,
        certs: TestCertificates,
        handle: Handler,
        *,
        host: str = "127.0.0.1",
        handshake: bool = True,
    ) -> None:
        self._listener = socket.create_server((host, 0))
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(certs.cert_path, certs.key_path)
        self._handle = handle
        self._handshake = handshake
        self.connections = 0
        self.url = f"https://{host}:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, name="raw-https", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:  # the listener was closed: the test is over
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(10)
        try:
            if self._handshake:
                sock = self._context.wrap_socket(sock, server_side=True)
            self._handle(sock)
        except OSError:
            pass  # the client gave up first, which is what some tests want
        finally:
            sock.close()

    def close(self) -> None:
        self._listener.close()


def read_request(sock: socket.socket) -> bytes:
    """The request's head (the agent's GETs have no body); empty if the client closed."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            return b""
        head += chunk
    return head


def hold_until_closed(sock: socket.socket) -> None:
    """Read and ignore whatever comes, answer nothing, until the client closes."""
    while sock.recv(4096):
        pass


def answer(sock: socket.socket, body: bytes, *, status: str = "200 OK") -> None:
    """A complete keep-alive HTTP/1.1 answer with a JSON body."""
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body)

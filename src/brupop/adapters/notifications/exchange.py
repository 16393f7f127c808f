"""One webhook exchange under a wall-clock deadline: connect, send, headers and body together.

A socket timeout bounds each read or write, not their sum: a receiver that drips a header byte
every second keeps a connection with a 5 s timeout open for as long as it likes. So every
exchange has a watchdog that shuts the connection's socket down when the deadline passes,
which ends whatever call is blocked on it. The connect is bounded by the same deadline (its
timeout), and is checked against it once done. Name resolution is not (the resolver cannot be
interrupted from Python).
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from urllib.parse import urlsplit

RESPONSE_LIMIT = 4096  # receivers answer "ok" or similar; no more is read


class ExchangeError(Exception):
    """The exchange did not complete: no connection, a broken answer, or the deadline."""


class DeadlineExceeded(ExchangeError):
    """The exchange was cut at its deadline."""


def post_within(url: str, body: bytes, headers: dict[str, str], seconds: float) -> int:
    """POST `body` to `url` and return the answer's status, all within `seconds`."""
    deadline = time.monotonic() + seconds
    connection = _connection(url, seconds)
    watchdog = _Watchdog(connection)
    timer = threading.Timer(seconds, watchdog.cut)
    timer.daemon = True
    timer.start()
    try:
        connection.connect()
        if time.monotonic() >= deadline:
            raise DeadlineExceeded(f"no answer within {seconds:g} s (connecting)")
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request("POST", path, body, headers)
        response = connection.getresponse()
        response.read(RESPONSE_LIMIT)
        timer.cancel()
        if watchdog.fired:  # a cut can end the answer early and look like a whole one
            raise DeadlineExceeded(f"no answer within {seconds:g} s")
        return response.status
    except (OSError, http.client.HTTPException, ValueError) as error:
        if watchdog.fired or time.monotonic() >= deadline:
            raise DeadlineExceeded(f"no answer within {seconds:g} s") from error
        raise ExchangeError(f"{type(error).__name__}: {error}") from error
    finally:
        timer.cancel()
        connection.close()


def _connection(url: str, seconds: float) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port
    if parts.scheme == "https":
        return http.client.HTTPSConnection(host, port, timeout=seconds)
    return http.client.HTTPConnection(host, port, timeout=seconds)


class _Watchdog:
    """Ends a connection's blocked call from another thread, at the deadline."""

    def __init__(self, connection: http.client.HTTPConnection) -> None:
        self._connection = connection
        self.fired = False

    def cut(self) -> None:
        self.fired = True
        sock = self._connection.sock
        if sock is None:
            return  # still connecting: the connect's own timeout and the check after it hold
        try:
            # The plain socket's shutdown, also under TLS: it wakes a blocked read or write
            # without touching the TLS object the blocked thread is using.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            return  # already closed

"""One GET with a hard deadline and a cap on how much of the answer is read.

http.client's timeout bounds each socket operation, not the whole exchange: a server that
dribbles its headers a byte at a time could hold a probe for far longer. So the exchange runs
in a short-lived daemon thread, and at the deadline the connection is closed under it, which
ends that thread promptly. Redirects are not followed; no proxy is used.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

BODY_MAX_BYTES = 1024 * 1024
USER_AGENT = "brupop-controller"


class BoundedGetError(Exception):
    """The GET got no usable answer; the message is a short reason (refused, timed out, ...)."""


@dataclass(frozen=True)
class Answer:
    """The status and up to `limit` bytes of the body (`truncated` when there was more)."""

    status: int
    body: bytes
    truncated: bool


def bounded_get(url: str, timeout_seconds: float, limit: int = BODY_MAX_BYTES) -> Answer:
    """GET `url`; the whole exchange ends within `timeout_seconds` (plus a little to close)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BoundedGetError(f"not an http(s) URL: {url!r}")
    # Each socket operation may wait a little longer than the whole exchange, so the exchange's
    # deadline below is what ends a stalled GET, always with the same reason.
    connection = _connection(parts.scheme, parts.hostname, parts.port, timeout_seconds + 1.0)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    outcome: list[Answer | Exception] = []

    def exchange() -> None:
        try:
            connection.request("GET", target, headers={"User-Agent": USER_AGENT})
            response = connection.getresponse()
            body = response.read(limit + 1)
            outcome.append(Answer(response.status, body[:limit], len(body) > limit))
        except Exception as error:  # reported to the caller, never lost in the thread
            outcome.append(error)

    worker = threading.Thread(target=exchange, name="bounded-get", daemon=True)
    worker.start()
    worker.join(timeout_seconds)
    if worker.is_alive():
        _abort(connection)
        worker.join(1.0)
        raise BoundedGetError(f"no answer within {timeout_seconds:g} s")
    connection.close()
    result = outcome[0] if outcome else BoundedGetError("no answer")
    if isinstance(result, Exception):
        raise BoundedGetError(_describe(result)) from None
    return result


def _connection(
    scheme: str, host: str, port: int | None, timeout: float
) -> http.client.HTTPConnection:
    if scheme == "https":
        context = ssl.create_default_context()
        return http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    return http.client.HTTPConnection(host, port, timeout=timeout)


def _abort(connection: http.client.HTTPConnection) -> None:
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed by the other side
            sock.shutdown(socket.SHUT_RDWR)
    connection.close()


def _describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"name not resolved ({error.strerror})"
    if isinstance(error, ssl.SSLError):
        return f"TLS failed ({error.reason or error})"
    if isinstance(error, http.client.HTTPException):
        return f"not an HTTP answer ({type(error).__name__})"
    if isinstance(error, OSError):
        return error.strerror or type(error).__name__
    return f"{type(error).__name__}: {error}"

"""One GET with a hard deadline, a cap on how much of the answer is read, and the SSRF rules.

http.client's timeout bounds each socket operation, not the whole exchange: a server that
dribbles its headers a byte at a time could hold a probe for far longer. So one wall-clock
deadline covers everything: the name's lookup (`HostLookups`, which a stuck resolver cannot
hold past it), connect, send, headers and body. The exchange runs in a short-lived daemon
thread; at the deadline the caller closes the connection under it and returns at once.

Every connection goes to an address the AddressAllowance was asked about after the lookup: the
connection is made to that very address (the Host header and TLS's SNI and certificate check
keep the name), so a name that resolves elsewhere the second time (DNS rebinding) gains
nothing. Redirects are not followed; no proxy is used; credentials in a URL are refused.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from brupop.adapters.http.host_lookup import HostLookupError, HostLookups
from brupop.domain.policy.address_allowance import ALLOWANCE_SETTING, AddressAllowance
from brupop.domain.printable import printable

BODY_MAX_BYTES = 1024 * 1024
USER_AGENT = "brupop-controller"
REASON_MAX_LENGTH = 160  # how much of an error's own text a reason repeats
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SOCKET_SLACK = 0.5


class BoundedGetError(Exception):
    """The GET got no usable answer; the message is a short reason (refused, timed out, ...)."""


@dataclass(frozen=True)
class BoundedAnswer:
    """The status and up to `limit` bytes of the body (`truncated` when there was more)."""

    status: int
    body: bytes
    truncated: bool


class BoundedGet:
    """GETs under `allowance` (by default: no loopback, link-local, metadata or API server),
    each within its deadline; names resolved through `lookups`."""

    def __init__(
        self, allowance: AddressAllowance | None = None, lookups: HostLookups | None = None
    ) -> None:
        self._allowance = allowance if allowance is not None else AddressAllowance()
        self._lookups = lookups if lookups is not None else HostLookups()

    def get(self, url: str, timeout_seconds: float, limit: int = BODY_MAX_BYTES) -> BoundedAnswer:
        """GET `url`; whatever happens, the call returns within `timeout_seconds`."""
        deadline = time.monotonic() + timeout_seconds
        parts, port = _target(url)
        host = parts.hostname or ""
        refusal = self._allowance.name_refusal(host)
        if refusal is not None:
            raise BoundedGetError(_refused(refusal))
        try:
            addresses = self._lookups.addresses(host, port, deadline)
        except HostLookupError as error:
            raise BoundedGetError(str(error)) from None
        for address in addresses:  # one refused address refuses the name: no falling back
            refusal = self._allowance.address_refusal(host, address)
            if refusal is not None:
                raise BoundedGetError(_refused(refusal))
        left = deadline - time.monotonic()
        if left <= 0:
            raise BoundedGetError(f"no answer within {round(timeout_seconds, 1):g} s")
        # Socket operations may wait a little past the deadline, so that the deadline (not a
        # socket timeout) is what ends a stalled exchange, always with the same reason.
        connection = _connection(parts.scheme, host, port, addresses[0], left + _SOCKET_SLACK)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return _exchange(connection, path, limit, deadline, timeout_seconds)


def _target(url: str) -> tuple[SplitResult, int]:
    """The URL's parts and port; BoundedGetError (never repeating the URL) when it is not a
    plain http(s) URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise BoundedGetError("not an http(s) URL") from None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise BoundedGetError("not an http(s) URL")
    if "@" in parts.netloc:
        raise BoundedGetError("refused: credentials do not belong in the URL")
    return parts, port if port is not None else _DEFAULT_PORTS[parts.scheme]


def _refused(reason: str) -> str:
    return f"refused: {reason} (not allowed by {ALLOWANCE_SETTING})"


def _connection(
    scheme: str, host: str, port: int, address: str, timeout: float
) -> http.client.HTTPConnection:
    """A connection for `host` that connects to `address`, the one the allowance checked."""
    connection: http.client.HTTPConnection
    if scheme == "https":
        context = ssl.create_default_context()
        connection = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    else:
        connection = http.client.HTTPConnection(host, port, timeout=timeout)

    def connect_to_checked(
        _: tuple[str, int], timeout: float | None, source: tuple[str, int] | None = None
    ) -> socket.socket:
        return socket.create_connection((address, port), timeout)

    connection._create_connection = connect_to_checked  # type: ignore[attr-defined]
    return connection


def _exchange(
    connection: http.client.HTTPConnection,
    path: str,
    limit: int,
    deadline: float,
    timeout_seconds: float,
) -> BoundedAnswer:
    outcome: list[BoundedAnswer | Exception] = []

    def exchange() -> None:
        try:
            connection.request("GET", path, headers={"User-Agent": USER_AGENT})
            response = connection.getresponse()
            body = response.read(limit + 1)
            outcome.append(BoundedAnswer(response.status, body[:limit], len(body) > limit))
        except Exception as error:  # reported to the caller, never lost in the thread
            outcome.append(error)

    worker = threading.Thread(target=exchange, name="bounded-get", daemon=True)
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0.0))
    if worker.is_alive():
        _abort(connection)  # the worker ends on its own once its socket is shut
        raise BoundedGetError(f"no answer within {round(timeout_seconds, 1):g} s")
    connection.close()
    result = outcome[0] if outcome else BoundedGetError("no answer")
    if isinstance(result, Exception):
        raise BoundedGetError(_describe(result)) from None
    return result


def _abort(connection: http.client.HTTPConnection) -> None:
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed by the other side
            sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        connection.close()


def _describe(error: BaseException) -> str:
    """A short reason; what the other side sent is bounded and cleaned of controls."""
    if isinstance(error, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, ssl.SSLError):
        return f"TLS failed ({printable(str(error.reason or error), REASON_MAX_LENGTH)})"
    if isinstance(error, http.client.HTTPException):
        return f"not an HTTP answer ({type(error).__name__})"
    if isinstance(error, OSError):
        return printable(error.strerror or type(error).__name__, REASON_MAX_LENGTH)
    return printable(f"{type(error).__name__}: {error}", REASON_MAX_LENGTH)

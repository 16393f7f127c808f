"""HTTPS calls to the brupop apiserver: CA from a file, a fresh token on every call, bounded time
and size.

Retries (exponential backoff with full jitter) happen only where retrying can help: connection
errors and timeouts, 429 and 5xx. Any other 4xx is answered to the caller at once, and so is an
answer too long to be one of the apiserver's.

Its values are value objects rather than dataclasses, which compile their methods at import
(about 1.2 ms of CPU each at every agent start), or NamedTuples, which load `typing`.
"""

from __future__ import annotations

import json
import os
import ssl
import time
from collections.abc import Callable, Mapping

from brupop.adapters.apiserver_client.answers import error_text, json_object
from brupop.adapters.apiserver_client.base_url import query_string
from brupop.adapters.apiserver_client.connections import (
    ApiserverConnections,
    ResponseTooLargeError,
)
from brupop.adapters.apiserver_client.http_exchange import BadAnswerError
from brupop.adapters.system import event_lines, jitter
from brupop.domain.retry_backoff import Backoff
from brupop.domain.value_objects import value_object
from brupop.ports.errors import (
    PortError,
    TooManyRequestsError,
    UnauthorizedError,
    UnavailableError,
)

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any

NODE_NAME_HEADER = "BrupopNodeName"
NODE_UID_HEADER = "BrupopNodeUid"
TOKEN_HEADER = "BrupopK8sAuthToken"
MAX_CONNECT_SECONDS = 10.0
# A shadow document is a few KiB, a drain's list of blockers a few more.
MAX_RESPONSE_BYTES = 1024 * 1024
# A service-account token is 1 to 2 KiB; the apiserver refuses a request head over 64 KiB.
MAX_TOKEN_BYTES = 32 * 1024
USER_AGENT = "brupop-agent"

log = event_lines.get_logger(__name__)


@value_object
class RetrySchedule:
    """How often and how long to retry a call that may succeed later."""

    retries: int = 5
    base_seconds: float = 0.1
    cap_seconds: float = 10.0

    def delay(self, attempt: int, draw: Callable[[], float]) -> float:
        """Full jitter after retry `attempt` (0 first): uniform below min(cap, base*2**attempt)."""
        return Backoff(self.base_seconds, self.cap_seconds).delay(attempt + 1, draw)


@value_object
class Reply:
    """An answer the caller has to interpret: 2xx or a 4xx that retrying would not change."""

    status: int
    data: bytes

    def json(self) -> dict[str, Any]:
        """The answer's JSON object; UnavailableError when it is anything else."""
        return json_object(self.data)

    def error_message(self) -> str:
        """What the answer says went wrong, in a few hundred characters."""
        return error_text(self.status, self.data)


class HttpsTransport:
    """Authenticated HTTPS requests to one apiserver, on a small reused connection pool."""

    def __init__(
        self,
        *,
        base_url: str,
        node_name: str,
        token_path: str | os.PathLike[str],
        ca_path: str | os.PathLike[str],
        retry: RetrySchedule,
        sleep: Callable[[float], None] = time.sleep,
        draw: Callable[[], float] = jitter.uniform,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self._connections = ApiserverConnections(base_url, ca_path)
        self._node_name = node_name
        self._token_path = token_path
        self._retry = retry
        self._sleep = sleep
        self._draw = draw
        self._max_response_bytes = max_response_bytes

    def call(
        self,
        method: str,
        path: str,
        *,
        read_seconds: float,
        node_uid: str | None = None,
        body: Any = None,
        query: Mapping[str, str] | None = None,
    ) -> Reply:
        """One logical call, retried as the policy allows."""
        target = self._connections.path_prefix + path + (f"?{query_string(query)}" if query else "")
        data = None if body is None else json.dumps(body).encode()
        attempt = 0
        while True:
            headers = self._headers(node_uid, with_body=data is not None)
            problem = self._attempt(method, target, headers, data, read_seconds)
            if isinstance(problem, Reply):
                return problem
            if attempt >= self._retry.retries:
                raise problem
            delay = self._retry.delay(attempt, self._draw)
            log.info("apiserver.retry", path=path, attempt=attempt + 1, error=str(problem))
            self._sleep(delay)
            attempt += 1

    def _attempt(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        data: bytes | None,
        read_seconds: float,
    ) -> Reply | PortError:
        try:
            status, body = self._connections.exchange(
                method,
                target,
                headers=headers,
                body=data,
                connect_seconds=min(MAX_CONNECT_SECONDS, read_seconds),
                read_seconds=read_seconds,
                max_bytes=self._max_response_bytes,
            )
        except ResponseTooLargeError as error:
            raise UnavailableError(f"the apiserver's answer is too long: {error}") from None
        except ssl.SSLError as error:
            self._connections.drop_all()  # the CA may have been renewed: read it again
            return UnavailableError(f"cannot reach the apiserver: {_describe(error)}"[:300])
        except (OSError, BadAnswerError) as error:
            return UnavailableError(f"cannot reach the apiserver: {_describe(error)}"[:300])
        reply = Reply(status, body)
        if reply.status == 429:
            return TooManyRequestsError(f"apiserver busy: {reply.error_message()}")
        if reply.status >= 500:
            return UnavailableError(f"apiserver answered {reply.status}: {reply.error_message()}")
        return reply

    def _headers(self, node_uid: str | None, *, with_body: bool) -> dict[str, str]:
        headers = {
            NODE_NAME_HEADER: self._node_name,
            TOKEN_HEADER: self._token(),
            "User-Agent": USER_AGENT,
        }
        if node_uid is not None:
            headers[NODE_UID_HEADER] = node_uid
        if with_body:
            headers["Content-Type"] = "application/json"
        return headers

    def _token(self) -> str:
        """The projected token, read again on every call (the kubelet rotates it), within
        bounds: whatever the file holds is a token or an UnauthorizedError."""
        try:
            with open(self._token_path, "rb") as file:
                data = file.read(MAX_TOKEN_BYTES + 1)
        except OSError as error:
            raise UnauthorizedError(f"cannot read the token file: {error.strerror}") from None
        if len(data) > MAX_TOKEN_BYTES:
            raise UnauthorizedError(f"the token file is longer than {MAX_TOKEN_BYTES} bytes")
        token = data.strip().decode("ascii", "replace")
        if not token:
            raise UnauthorizedError("the token file is empty")
        if not (token.isascii() and token.isprintable()):  # it goes into a header line
            raise UnauthorizedError("the token file is not one line of ASCII text")
        return token

    def close(self) -> None:
        """Close the pooled connections (the next call opens new ones)."""
        self._connections.drop_all()


def _describe(error: BaseException) -> str:
    """An exchange error in a few words: its own message, else its kind."""
    return str(error) or type(error).__name__

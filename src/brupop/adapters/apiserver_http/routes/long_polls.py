"""The agents' long-poll answered below the ASGI app: what it costs a rollout wave.

When every shadow changes at once, each agent's answer and its next long-poll are two requests,
and on the ASGI path most of their CPU is Starlette's and the middleware's layers, not the work
(docs/bench.md, section 6). So the HTTP protocol (`serving/http_protocol.py`) hands a request to
`LongPolls` first: a plain `GET /bottlerocket-node-resource?timeoutSeconds=T` with T > 0, whose
caller's token is already authorized in the cache, is waited for and answered here, through the
same wait (`Handlers.shadow_for`: the per-caller waits, the shutdown's and the hang-up's early
end), the same metrics and the same answers. Anything else (another route, a body, a bad header
or parameter, a token to review) goes the ASGI way, which answers it as it always has.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl

import httptools
import structlog
from prometheus_client import Counter, Histogram

from brupop.adapters.apiserver_http.routes.authorization import DecisionRenewals
from brupop.adapters.apiserver_http.routes.closing import ClientGoneError, Closing, LostSignal
from brupop.adapters.apiserver_http.routes.errors import CLIENT_CLOSED_REQUEST, port_error_answer
from brupop.adapters.apiserver_http.routes.handlers import Handlers
from brupop.adapters.apiserver_http.routes.headers import HeaderError, access_request
from brupop.adapters.apiserver_http.routes.metrics import ApiserverMetrics
from brupop.adapters.apiserver_http.routes.requests import BadRequestError, wait_query
from brupop.adapters.apiserver_http.routes.wire import error_body, shadow_document
from brupop.ports.errors import PortError
from brupop.services.apiserver.authorization.authorizer import AgentCaller, Authorizer
from brupop.services.apiserver.authorization.errors import UnauthenticatedError

RESOURCE = "/bottlerocket-node-resource"
_PATH = RESOURCE.encode()
_PARAMETERS = frozenset({"timeoutSeconds", "resourceVersion"})
# Request headers that may announce a body: such a request goes the ASGI way (body limits).
_BODY_HEADERS = frozenset({b"transfer-encoding", b"expect"})
_JSON = (b"content-type", b"application/json")
_RETRY_AFTER = (b"retry-after", b"5")
# As Starlette's JSONResponse renders a body; made once, not per answer as json.dumps would.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Admitted:
    """A long-poll this lane answers: its authorized caller and what it waits for."""

    caller: AgentCaller
    version: str | None
    timeout: float


@dataclass(frozen=True)
class LongPollAnswer:
    """What to send: the status, the headers after the server's own, and the body (a client
    that hung up, 499, is sent nothing)."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


class LongPolls:
    """Admits cached-authorized long-polls and answers them, as the ASGI route would."""

    def __init__(
        self,
        *,
        authorizer: Authorizer,
        renewals: DecisionRenewals,
        metrics: ApiserverMetrics,
        handlers: Handlers,
        closing: Closing,
        longest_wait_seconds: float,
    ) -> None:
        self._authorizer = authorizer
        self._renewals = renewals
        self._metrics = metrics
        self._handlers = handlers
        self._closing = closing
        self._longest_wait = longest_wait_seconds
        self._counted: dict[int, Counter] = {}  # the requests counter's series by status
        self.answered = 0  # long-polls this lane answered (for tests)

    @property
    def closing(self) -> bool:
        """The server is stopping: answers carry `Connection: close`."""
        return self._closing.closed

    def admit(self, target: bytes, headers: Iterable[tuple[bytes, bytes]]) -> Admitted | None:
        """The long-poll a GET of `target` with `headers` is, if this lane answers it."""
        try:
            url = httptools.parse_url(target)
        except httptools.HttpParserInvalidURLError:
            return None
        if url.path != _PATH or url.fragment:
            return None
        wait = _wait(url.query or b"", self._longest_wait)
        if wait is None or any(_announces_body(name, value) for name, value in headers):
            return None
        try:
            request = access_request(headers, uid_required=True)
            caller = self._authorizer.cached(request)
        except (HeaderError, UnauthenticatedError):
            return None
        if caller is None:
            return None
        self._renewals.consider(request)
        self._allowed_cached.inc()
        return Admitted(caller, *wait)

    async def answer(self, poll: Admitted, connection: LostSignal) -> LongPollAnswer:
        """Wait as the route does, then the answer; counted and timed as the route's are."""
        started = time.perf_counter()
        answer = LongPollAnswer(500, [], b"")
        try:
            answer = await self._answer(poll, connection)
            return answer
        finally:
            self.answered += 1
            self._count(answer.status)
            self._latency.observe(time.perf_counter() - started)

    # The metrics' series are looked up once, on first use (a burst answers thousands at once;
    # a series shows in /metrics only once counted, as the ASGI route's do).
    @cached_property
    def _allowed_cached(self) -> Counter:
        return self._metrics.authorizations.labels("allowed_cached")

    @cached_property
    def _latency(self) -> Histogram:
        return self._metrics.latency.labels(RESOURCE, "GET")

    def _count(self, status: int) -> None:
        series = self._counted.get(status)
        if series is None:
            series = self._counted[status] = self._metrics.requests.labels(
                RESOURCE, "GET", str(status)
            )
        series.inc()

    async def _answer(self, poll: Admitted, connection: LostSignal) -> LongPollAnswer:
        try:
            shadow = await self._handlers.shadow_for(
                poll.caller, poll.version, poll.timeout, connection=connection
            )
        except ClientGoneError:
            log.debug("request.client_gone", path=RESOURCE)
            return LongPollAnswer(CLIENT_CLOSED_REQUEST, [], b"")
        except PortError as error:
            return _error(*port_error_answer(error, RESOURCE))
        except Exception as error:  # a bug: a short 500, as UnexpectedErrorMiddleware answers
            log.error(
                "request.failed",
                path=RESOURCE,
                error=type(error).__name__,
                answered=False,
                exc_info=error,
            )
            return _error(500, "internal error")
        if shadow is None:
            return _error(404, f"node {poll.caller.node_name} has no shadow")
        return _json(200, shadow_document(shadow))


def _wait(query: bytes, longest: float) -> tuple[str | None, float] | None:
    """The wait the query asks for: each parameter at most once, a timeout above 0."""
    pairs = _pairs(query.decode("latin-1"))
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names) or not _PARAMETERS.issuperset(names):
        return None
    try:
        version, timeout = wait_query(dict(pairs), longest)
    except BadRequestError:
        return None
    return (version, timeout) if timeout > 0 else None


def _pairs(query: str) -> list[tuple[str, str]]:
    """The query's parameters as `parse_qsl(query, keep_blank_values=True)` gives them, without
    its decoding steps when there is nothing to decode (an agent's query never has)."""
    if "%" in query or "+" in query:
        return parse_qsl(query, keep_blank_values=True)
    return [(name, value) for name, _, value in (p.partition("=") for p in query.split("&") if p)]


def _announces_body(name: bytes, value: bytes) -> bool:
    return name in _BODY_HEADERS or (name == b"content-length" and value.strip() != b"0")


def _error(status: int, message: str) -> LongPollAnswer:
    answer = _json(status, error_body(message))
    if status in (429, 503):
        answer.headers.append(_RETRY_AFTER)
    return answer


def _json(status: int, document: dict[str, Any]) -> LongPollAnswer:
    """As Starlette's JSONResponse renders it."""
    body = _ENCODER.encode(document).encode("utf-8")
    return LongPollAnswer(status, [(b"content-length", b"%d" % len(body)), _JSON], body)

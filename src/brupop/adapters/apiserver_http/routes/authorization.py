"""The authorization middleware: every protected route is decided before its handler runs.

400 for missing or malformed Brupop headers, 401 when the token is not accepted, 403 when the
caller may not act on the node it names, 503/502 when Kubernetes could not answer.

Token reviews run on a limiter of their own, apart from the handlers' threads, and only so many
may wait for it (503 past that): a flood of bad tokens never slows the work of agents already
authorized. While every review thread is busy, a client address with a couple of reviews in
flight is refused more (429), so one pod sending made-up tokens cannot take the reviews of the
agents whose token is new.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from starlette.types import ASGIApp, Receive, Scope, Send

from brupop.adapters.apiserver_http.routes.headers import HeaderError, access_request
from brupop.adapters.apiserver_http.routes.metrics import ApiserverMetrics
from brupop.adapters.apiserver_http.routes.wire import error_response
from brupop.adapters.apiserver_http.routes.worker_threads import on_worker_thread
from brupop.ports.errors import PortError, TooManyRequestsError, UnavailableError
from brupop.services.apiserver.authorization.authorizer import (
    AccessRequest,
    AgentCaller,
    Authorizer,
)
from brupop.services.apiserver.authorization.errors import NotAllowedError, UnauthenticatedError

CALLER = "caller"
# Reviews that may wait for a thread before more are refused (each holds only a coroutine).
REVIEWS_WAITING = 64
# Reviews one client address may have in flight while the review threads are all busy: an agent
# sends one request at a time.
REVIEWS_PER_CLIENT = 2

log = structlog.get_logger(__name__)


class AuthorizationMiddleware:
    """Puts the authorized AgentCaller in `scope["state"]["caller"]`, or answers the refusal."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        authorizer: Authorizer,
        metrics: ApiserverMetrics,
        protected: Mapping[str, bool],
        limiter: Any,
        waiting: int = REVIEWS_WAITING,
        per_client: int = REVIEWS_PER_CLIENT,
    ) -> None:
        self._app = app
        self._authorizer = authorizer
        self._metrics = metrics
        self._protected = protected  # path -> whether BrupopNodeUid is required
        self._limiter = limiter  # a callable giving the reviews' CapacityLimiter
        self._waiting = waiting
        self._per_client = per_client
        self._in_flight: dict[str, int] = {}  # client address -> its reviews (one event loop)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        uid_required = (
            self._protected.get(scope.get("path", "")) if scope["type"] == "http" else None
        )
        if uid_required is None:
            await self._app(scope, receive, send)
            return
        outcome, answer = await self._decide(scope, uid_required=uid_required)
        self._metrics.authorizations.labels(outcome).inc()
        if isinstance(answer, AgentCaller):
            scope.setdefault("state", {})[CALLER] = answer
            await self._app(scope, receive, send)
            return
        status, message = answer
        await error_response(status, message)(scope, receive, send)

    async def _decide(
        self, scope: Scope, *, uid_required: bool
    ) -> tuple[str, AgentCaller | tuple[int, str]]:
        try:
            request = access_request(scope["headers"], uid_required=uid_required)
        except HeaderError as error:
            return "bad_request", (400, str(error))
        try:
            caller = self._authorizer.cached(request)
        except UnauthenticatedError as error:
            return "unauthenticated_cached", (401, str(error))
        if caller is not None:
            return "allowed_cached", caller
        client = _client_address(scope)
        limiter = self._limiter()
        contended = limiter.available_tokens < 1
        if contended and self._in_flight.get(client, 0) >= self._per_client:
            return "busy", (429, "too many token reviews from this address; retry")
        if limiter.statistics().tasks_waiting >= self._waiting:
            return "busy", (503, "too many token reviews in progress; retry")
        self._in_flight[client] = self._in_flight.get(client, 0) + 1
        try:
            return await self._review(request, limiter)
        finally:
            self._left(client)

    async def _review(
        self, request: AccessRequest, limiter: Any
    ) -> tuple[str, AgentCaller | tuple[int, str]]:
        try:
            caller = await on_worker_thread(self._authorizer.authorize, request, limiter=limiter)
        except UnauthenticatedError as error:
            return "unauthenticated", (401, str(error))
        except NotAllowedError as error:
            return "forbidden", (403, str(error))
        except (UnavailableError, TooManyRequestsError) as error:
            log.warning("authorization.cluster_unavailable", error=str(error))
            return "cluster_error", (503, "the cluster could not check the token; retry")
        except PortError as error:
            log.warning("authorization.cluster_failed", error=str(error))
            return "cluster_error", (502, "the cluster refused the authorization check")
        return "allowed", caller

    def _left(self, client: str) -> None:
        count = self._in_flight.get(client, 1) - 1
        if count > 0:
            self._in_flight[client] = count
        else:
            self._in_flight.pop(client, None)


def _client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else ""

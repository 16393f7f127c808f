"""The authorization middleware: every protected route is decided before its handler runs.

400 for missing or malformed Brupop headers, 401 when the token is not accepted, 403 when the
caller may not act on the node it names, 503/502 when Kubernetes could not answer.

Token reviews run on a limiter of their own, apart from the handlers' threads, and only so many
may wait for it (503 past that): a flood of bad tokens never slows the work of agents already
authorized. While every review thread is busy, a client address with a couple of reviews in
flight is refused more (429), so one pod sending made-up tokens cannot take the reviews of the
agents whose token is new.

A cached decision due for renewal is renewed off the request's path (`DecisionRenewals`), on the
same review threads while at least half of them are free, so the agents that connected together
are not all reviewed again on the full path the moment their decisions expire.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
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


class DecisionRenewals:
    """Renews cached decisions due for it (`Authorizer.renewal_due`) in the background: one
    renewal at a time per request, at most half the review threads' worth at once, and only
    while half of those threads are free (a later request renews it otherwise). A renewal that
    finds the token refused drops the decision."""

    def __init__(self, authorizer: Authorizer, limiter: Callable[[], Any]) -> None:
        self._authorizer = authorizer
        self._limiter = limiter  # a callable giving the reviews' CapacityLimiter
        self._pending: set[AccessRequest] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.renewed = 0  # renewals that ended with the decision renewed (for tests)

    def consider(self, request: AccessRequest) -> None:
        """Start renewing the cached decision of `request` if it is due and a thread is free."""
        if request in self._pending or not self._authorizer.renewal_due(request):
            return
        limiter = self._limiter()
        # Counted here, not by the limiter alone: renewals started in one burst have not yet
        # taken their threads when the next request asks.
        if len(self._pending) * 2 >= limiter.total_tokens:
            return
        if limiter.available_tokens * 2 < limiter.total_tokens:
            return
        self._pending.add(request)
        task = asyncio.get_running_loop().create_task(self._renew(request, limiter))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _renew(self, request: AccessRequest, limiter: Any) -> None:
        try:
            await on_worker_thread(self._authorizer.renew, request, limiter=limiter)
            self.renewed += 1
        except (UnauthenticatedError, NotAllowedError) as error:
            log.info("authorization.renewal_refused", node=request.node_name, reason=str(error))
        except PortError as error:  # the decision stands until it expires; a later one renews
            log.debug("authorization.renewal_unavailable", error=str(error))
        except Exception:  # a bug: said once, the request path goes on as before
            log.exception("authorization.renewal_failed", node=request.node_name)
        finally:
            self._pending.discard(request)


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
        renewals: DecisionRenewals,
        waiting: int = REVIEWS_WAITING,
        per_client: int = REVIEWS_PER_CLIENT,
    ) -> None:
        self._app = app
        self._authorizer = authorizer
        self._metrics = metrics
        self._protected = protected  # path -> whether BrupopNodeUid is required
        self._limiter = limiter  # a callable giving the reviews' CapacityLimiter
        self._renewals = renewals
        self._waiting = waiting
        self._per_client = per_client
        self._in_flight: dict[str, int] = {}  # client address -> its reviews (one event loop)
        # Reviews admitted and not yet done: a burst admitted in one turn of the event loop has
        # not taken the limiter's threads yet, so the limiter alone would see them all free.
        self._reviewing = 0

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
            self._renewals.consider(request)
            return "allowed_cached", caller
        client = _client_address(scope)
        limiter = self._limiter()
        contended = limiter.available_tokens < 1 or self._reviewing >= limiter.total_tokens
        if contended and self._in_flight.get(client, 0) >= self._per_client:
            return "busy", (429, "too many token reviews from this address; retry")
        if limiter.statistics().tasks_waiting >= self._waiting:
            return "busy", (503, "too many token reviews in progress; retry")
        self._in_flight[client] = self._in_flight.get(client, 0) + 1
        self._reviewing += 1
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
        self._reviewing -= 1
        count = self._in_flight.get(client, 1) - 1
        if count > 0:
            self._in_flight[client] = count
        else:
            self._in_flight.pop(client, None)


def _client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else ""

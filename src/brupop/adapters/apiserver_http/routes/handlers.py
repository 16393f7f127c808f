"""The route handlers: each acts only on the authorized caller's own shadow and node."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import Receive

from brupop.adapters.apiserver_http.conversion.by_size import ConversionBySize
from brupop.adapters.apiserver_http.routes.authorization import CALLER
from brupop.adapters.apiserver_http.routes.closing import Closing, LostSignal
from brupop.adapters.apiserver_http.routes.requests import (
    BadRequestError,
    parse_status,
    read_body,
    wait_parameters,
)
from brupop.adapters.apiserver_http.routes.waits import CallerWaits
from brupop.adapters.apiserver_http.routes.wire import error_response, shadow_document
from brupop.adapters.apiserver_http.routes.worker_threads import on_worker_thread
from brupop.domain.shadow import Shadow, shadow_name
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.errors import DrainFailedError, NotFoundError
from brupop.services.apiserver.authorization.authorizer import AgentCaller
from brupop.services.apiserver.drain.node_actions import NodeActions
from brupop.services.apiserver.drain.registry import DrainRegistry
from brupop.services.apiserver.shadow_feed import ShadowFeed
from brupop.services.apiserver.status_reports import (
    ReportOutOfBoundsError,
    ReportsTooFrequentError,
    StatusReports,
    VersionNotOfferedError,
)

T = TypeVar("T")

log = structlog.get_logger(__name__)


class Handlers:
    """The apiserver's routes over the services; blocking calls go to a bounded threadpool."""

    def __init__(
        self,
        *,
        shadows: ShadowRepository,
        reports: StatusReports,
        actions: NodeActions,
        drains: DrainRegistry,
        feed: ShadowFeed,
        closing: Closing,
        conversion: ConversionBySize,
        limiter: Callable[[], Any],
        longest_wait_seconds: float,
        drain_wait_seconds: float,
        authorization_problem: Callable[[], str | None] = lambda: None,
    ) -> None:
        """`authorization_problem` says why agents cannot be authorized now (readiness)."""
        self._authorization_problem = authorization_problem
        self._shadows = shadows
        self._reports = reports
        self._actions = actions
        self._drains = drains
        self._feed = feed
        self._closing = closing
        self._conversion = conversion
        self._limiter = limiter
        self._longest_wait = longest_wait_seconds
        self._waits = CallerWaits()
        self._drain_wait = drain_wait_seconds

    async def _call(self, function: Callable[..., T], *args: Any) -> T:
        return await on_worker_thread(function, *args, limiter=self._limiter())

    async def ping(self, _request: Request) -> Response:
        return PlainTextResponse("pong")

    async def ready(self, _request: Request) -> Response:
        """Readiness: the shared shadow watch has listed once and does not keep failing, the
        conversion worker does not keep failing to start, and agents can be authorized."""
        if self._conversion.failing:
            return PlainTextResponse("not ready: the conversion worker keeps failing\n", 503)
        if self._feed.failing:
            return PlainTextResponse("not ready: the shadow watch keeps failing\n", 503)
        problem = self._authorization_problem()
        if problem is not None:
            return PlainTextResponse(f"not ready: {problem}\n", 503)
        if not self._feed.ready:
            return PlainTextResponse("not ready: the shadow watch has not listed yet\n", 503)
        return PlainTextResponse("ok\n")

    async def node_uid(self, request: Request) -> Response:
        caller = _caller(request)
        return JSONResponse({"node_name": caller.node_name, "node_uid": caller.node_uid})

    async def create_shadow(self, request: Request) -> Response:
        caller = _caller(request)
        shadow = await self._call(self._shadows.create, caller.node_name, caller.node_uid)
        log.info("shadow.created", node=caller.node_name)
        return JSONResponse(shadow_document(shadow))

    async def read_shadow(self, request: Request) -> Response:
        caller = _caller(request)
        version, timeout = wait_parameters(request, self._longest_wait)
        shadow = await self.shadow_for(caller, version, timeout, receive=request.receive)
        if shadow is None:
            return error_response(404, f"node {caller.node_name} has no shadow")
        return JSONResponse(shadow_document(shadow))

    async def shadow_for(
        self,
        caller: AgentCaller,
        version: str | None,
        timeout: float,
        *,
        receive: Receive | None = None,
        connection: LostSignal | None = None,
    ) -> Shadow | None:
        """The caller's shadow once it is past `version`, or `timeout` passed (0: at once). A
        hang-up, told by `receive` or `connection`, raises ClientGoneError."""
        name = shadow_name(caller.node_name)
        answer = None
        if timeout > 0:
            # At most two waits per node: a third ends the oldest (see `waits.py`). The race's
            # deadline is the wait's only timer (the feed's wait has none of its own).
            _, answer = await self._closing.race(
                self._waits.wait(
                    caller.node_name, lambda: self._feed.wait_for_change(name, version, None)
                ),
                timeout,
                receive=receive,
                connection=connection,
            )
            if answer is None:
                # The wait timed out or was cut short (the server stopping, a newer wait of
                # the same node): the feed may still know, the shadow moved on or still at
                # `version`. A read without a wait stays a read from the cluster.
                answer = self._feed.answer_now(name, version)
        if answer is not None:
            return answer.shadow
        return await self._call(self._get_shadow, name)

    def _get_shadow(self, name: str) -> Shadow | None:
        try:
            return self._shadows.get(name)
        except NotFoundError:
            return None

    async def update_status(self, request: Request) -> Response:
        caller = _caller(request)
        status = parse_status(await read_body(request))
        name = shadow_name(caller.node_name)
        try:
            shadow = await self._call(self._reports.write, name, caller.node_name, status)
        except NotFoundError:
            return error_response(404, f"node {caller.node_name} has no shadow")
        except VersionNotOfferedError as refused:
            return error_response(422, str(refused))
        except ReportOutOfBoundsError as refused:
            return error_response(400, str(refused), field=f"status.{refused.field}")
        except ReportsTooFrequentError as refused:
            return error_response(429, str(refused))
        if request.query_params.get("view") == "shadow":
            return JSONResponse(shadow_document(shadow))
        return JSONResponse(status.model_dump(mode="json"))

    async def cordon_and_drain(self, request: Request) -> Response:
        caller = _caller(request)
        pending = asyncio.wrap_future(self._drains.request(caller.node_name))
        pending.add_done_callback(_retrieve)
        try:
            finished, report = await self._closing.race(
                asyncio.shield(pending), self._drain_wait, receive=request.receive
            )
        except DrainFailedError as failure:
            return error_response(409, str(failure), blockers=list(failure.blockers))
        if not finished or report is None:
            return error_response(503, "the drain is still in progress; ask again to wait for it")
        log.info("drain.answered", node=caller.node_name, evicted=len(report.evicted))
        return Response(status_code=200)

    async def uncordon(self, request: Request) -> Response:
        caller = _caller(request)
        self._drains.forget(caller.node_name)
        await self._call(self._actions.uncordon, caller.node_name)
        return Response(status_code=200)

    async def exclude_from_lb(self, request: Request) -> Response:
        caller = _caller(request)
        await self._call(self._actions.exclude_from_load_balancers, caller.node_name)
        return Response(status_code=200)

    async def remove_lb_exclusion(self, request: Request) -> Response:
        caller = _caller(request)
        await self._call(self._actions.restore_to_load_balancers, caller.node_name)
        return Response(status_code=200)


def _caller(request: Request) -> AgentCaller:
    caller = request.scope.get("state", {}).get(CALLER)
    if not isinstance(caller, AgentCaller):  # only reachable if a route escaped the middleware
        raise BadRequestError("request was not authorized", status=401)
    return caller


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Read a finished drain's exception so asyncio never complains it went unread."""
    if not future.cancelled():
        future.exception()

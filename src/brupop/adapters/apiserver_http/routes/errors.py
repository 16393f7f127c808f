"""How failures become HTTP answers: bad input 4xx, cluster trouble 502/503, a bug 500; never a
traceback in an answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import structlog
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from brupop.adapters.apiserver_http.routes.closing import ClientGoneError
from brupop.adapters.apiserver_http.routes.requests import BadRequestError
from brupop.adapters.apiserver_http.routes.wire import error_response
from brupop.ports.errors import (
    AlreadyExistsError,
    ConflictError,
    InvalidObjectError,
    NotFoundError,
    PortError,
    TooManyRequestsError,
    UnavailableError,
)

log = structlog.get_logger(__name__)

CLIENT_CLOSED_REQUEST = 499

# Cluster answers the caller can act on, and what the caller hears.
_PORT_STATUS: tuple[tuple[type[PortError], int, str], ...] = (
    (NotFoundError, 404, "not found"),
    (AlreadyExistsError, 409, "already exists"),
    (ConflictError, 409, "changed concurrently; retry"),
    (InvalidObjectError, 422, "the cluster refused the object as invalid"),
    (TooManyRequestsError, 503, "the cluster is busy; retry"),
    (UnavailableError, 503, "the cluster could not be reached; retry"),
)


async def _bad_request(_request: Request, error: Exception) -> Response:
    status = error.status if isinstance(error, BadRequestError) else 400
    return error_response(status, str(error))


async def _client_gone(request: Request, _error: Exception) -> Response:
    """A client that hung up mid-wait hears nothing; 499 (as nginx counts it) is for the metrics."""
    log.debug("request.client_gone", path=request.url.path)
    return Response(status_code=CLIENT_CLOSED_REQUEST)


async def _http_error(_request: Request, error: Exception) -> Response:
    status = error.status_code if isinstance(error, HTTPException) else 500
    detail = error.detail if isinstance(error, HTTPException) else "error"
    return error_response(status, str(detail))


async def _port_error(request: Request, error: Exception) -> Response:
    return error_response(*port_error_answer(error, request.url.path))


def port_error_answer(error: Exception, path: str) -> tuple[int, str]:
    """The status and message a cluster error on `path` is answered with (logged once)."""
    for kind, status, message in _PORT_STATUS:
        if isinstance(error, kind):
            log.info("request.cluster_answer", path=path, status=status, error=str(error))
            return status, message
    log.warning("request.cluster_failed", path=path, error=str(error))
    return 502, "the cluster refused the operation"


class UnexpectedErrorMiddleware:
    """The last net, outside every other middleware: an exception nothing turned into an answer
    (a bug) is a 500 with a short body, and one ERROR line with its traceback. Nothing is raised
    on to the server, which would log it a second time."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        answered = False

        async def note_answer(message: Message) -> None:
            nonlocal answered
            answered = answered or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._app(scope, receive, note_answer)
        except Exception as error:
            log.error(
                "request.failed",
                path=scope.get("path"),
                error=type(error).__name__,
                answered=answered,
                exc_info=error,
            )
            if not answered:  # else the answer is cut short: the server closes the connection
                await error_response(500, "internal error")(scope, receive, send)


EXCEPTION_HANDLERS: Mapping[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    BadRequestError: _bad_request,
    ClientGoneError: _client_gone,
    HTTPException: _http_error,
    PortError: _port_error,
}

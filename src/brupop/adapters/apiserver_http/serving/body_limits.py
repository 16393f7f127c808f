"""Request bodies bounded per route, before anything else runs.

A declared `Content-Length` over the route's limit is answered 413 at once, before authorization,
so an oversized upload costs no TokenReview and no handler. A body sent without a length
(chunked) is bounded where it is read (`requests.read_body`, with the same limits); a route that
reads no body never buffers one (uvicorn drops what nobody reads).
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from brupop.adapters.apiserver_http.routes.wire import error_response

TOO_LARGE = "request body too large"


class BodyLimitMiddleware:
    """Refuses bodies larger than their route's limit with 413."""

    def __init__(self, app: ASGIApp, *, limits: Mapping[str, int], default: int) -> None:
        self._app = app
        self._limits = limits
        self._default = default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        limit = self._limits.get(scope["path"], self._default)
        if _declared_length(scope) > limit:
            await error_response(413, TOO_LARGE)(scope, receive, send)
            return
        await self._app(scope, receive, send)


def _declared_length(scope: Scope) -> int:
    for name, value in scope["headers"]:
        if name.lower() == b"content-length":
            return int(value) if value.isdigit() and len(value) <= 18 else 0
    return 0

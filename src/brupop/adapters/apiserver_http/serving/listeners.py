"""Which routes a listener, and a connection of its probe reserve, serves.

In a cluster the kube-apiserver (not a pod) calls `/crdconvert` and the kubelet calls `/ping` and
`/readyz`, so a NetworkPolicy must let anyone reach them, while the agents' API is for agent
pods only. With `APISERVER_WEBHOOK_PORT` set, the process also listens on that port and serves
only those routes there; the agents' port keeps serving every route.

A connection admitted from a listener's probe reserve (see `slots.py`: the listener was full) is
served one probe, `/ping` or `/readyz`, and closed; any other request on it is answered 503.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from brupop.adapters.apiserver_http.routes.wire import error_response
from brupop.adapters.apiserver_http.serving.http_protocol import BoundedHttpProtocol

WEBHOOK_PATHS = frozenset({"/crdconvert", "/ping", "/readyz"})
PROBE_PATHS = frozenset({"/ping", "/readyz"})
# The scope key marking a request that came on a reserve connection.
RESERVE_CONNECTION = "brupop.reserve_connection"


class ReserveHttpProtocol(BoundedHttpProtocol):
    """The HTTP protocol of a reserve connection: its requests are marked in their scope."""

    def on_headers_complete(self) -> None:
        scope = self.scope
        super().on_headers_complete()
        # The request's task has not run yet: it sees this in its scope.
        scope[RESERVE_CONNECTION] = True  # type: ignore[literal-required]


class WebhookPortMiddleware:
    """Answers 404 for any route but the webhook's and the probes' on the webhook port; on a
    reserve connection, serves the probes (then closes) and answers 503 for anything else."""

    def __init__(self, app: ASGIApp, *, port: int | None) -> None:
        self._app = app
        self._port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if scope.get(RESERVE_CONNECTION):
            await self._reserve(scope, receive, send)
            return
        if (
            self._port is not None
            and _local_port(scope) == self._port
            and scope.get("path") not in WEBHOOK_PATHS
        ):
            await error_response(
                404, "only /crdconvert, /ping and /readyz are served on this port"
            )(scope, receive, send)
            return
        await self._app(scope, receive, send)

    async def _reserve(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"connection", b"close")]
                message = {**message, "headers": headers}
            await send(message)

        if scope.get("path") not in PROBE_PATHS:
            refusal = error_response(503, "too many connections: only probes are served now")
            await refusal(scope, receive, send_closing)
            return
        await self._app(scope, receive, send_closing)


def _local_port(scope: Scope) -> int | None:
    server = scope.get("server")
    return int(server[1]) if server and len(server) > 1 and server[1] is not None else None

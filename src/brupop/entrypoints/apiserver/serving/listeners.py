"""Which routes the conversion-webhook port serves.

In a cluster the kube-apiserver (not a pod) calls `/crdconvert` and the kubelet calls `/ping` and
`/readyz`, so a NetworkPolicy must let anyone reach them, while the agents' API is for agent
pods only. With `APISERVER_WEBHOOK_PORT` set, the process also listens on that port and serves
only those routes there; the agents' port keeps serving every route.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from brupop.entrypoints.apiserver.routes.wire import error_response

WEBHOOK_PATHS = frozenset({"/crdconvert", "/ping", "/readyz"})


class WebhookPortMiddleware:
    """Answers 404 for any route but the webhook's and the probes' on the webhook port."""

    def __init__(self, app: ASGIApp, *, port: int | None) -> None:
        self._app = app
        self._port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self._port is not None
            and scope["type"] == "http"
            and _local_port(scope) == self._port
            and scope.get("path") not in WEBHOOK_PATHS
        ):
            await error_response(
                404, "only /crdconvert, /ping and /readyz are served on this port"
            )(scope, receive, send)
            return
        await self._app(scope, receive, send)


def _local_port(scope: Scope) -> int | None:
    server = scope.get("server")
    return int(server[1]) if server and len(server) > 1 and server[1] is not None else None

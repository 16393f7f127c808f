"""The apiserver app: routes, authorization before every protected handler, metrics, lifecycle.

`starlette_app` puts the HTTP surface around services that the apiserver's container
(`container.py`) builds over the cluster's ports, so the same app runs against Kubernetes, the
in-memory cluster of `brupop simulate`, and the tests.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from brupop.adapters.apiserver_http.conversion.worker_process import ConversionOptions
from brupop.adapters.apiserver_http.routes.authorization import (
    AuthorizationMiddleware,
    DecisionRenewals,
)
from brupop.adapters.apiserver_http.routes.closing import CloseConnectionsMiddleware, Closing
from brupop.adapters.apiserver_http.routes.conversion_webhook import (
    CONVERSION_BODY_LIMIT,
    ConversionRoute,
)
from brupop.adapters.apiserver_http.routes.errors import (
    EXCEPTION_HANDLERS,
    UnexpectedErrorMiddleware,
)
from brupop.adapters.apiserver_http.routes.handlers import Handlers
from brupop.adapters.apiserver_http.routes.long_polls import LongPolls
from brupop.adapters.apiserver_http.routes.metrics import ApiserverMetrics, MetricsMiddleware
from brupop.adapters.apiserver_http.routes.requests import MAX_BODY_BYTES
from brupop.adapters.apiserver_http.serving.body_limits import BodyLimitMiddleware
from brupop.adapters.apiserver_http.serving.listeners import WebhookPortMiddleware
from brupop.domain.shadow import DEFAULT_NAMESPACE
from brupop.services.apiserver.authorization.authorizer import Authorizer
from brupop.services.apiserver.drain.drainer import DrainTimings
from brupop.services.apiserver.drain.policy_source import DEFAULT_CACHE_SECONDS
from brupop.services.apiserver.status_reports import StatusPacing
from brupop.services.runtime.informer import WATCH_SECONDS
from brupop.services.runtime.supervisor import RestartSchedule

RESOURCE = "/bottlerocket-node-resource"
# Protected paths, and whether each needs the BrupopNodeUid header.
PROTECTED: dict[str, bool] = {
    RESOURCE: True,
    f"{RESOURCE}/cordon-and-drain": True,
    f"{RESOURCE}/uncordon": True,
    f"{RESOURCE}/exclude-from-lb": True,
    f"{RESOURCE}/remove-exclusion-from-lb": True,
    f"{RESOURCE}/node-uid": False,
}
OPEN_PATHS = frozenset({"/ping", "/readyz", "/metrics", "/crdconvert"})


@dataclass(frozen=True)
class ApiserverOptions:
    """How the app behaves; the defaults are the settings' defaults."""

    namespace: str = DEFAULT_NAMESPACE
    drain: DrainTimings = field(default_factory=DrainTimings)
    token_review_cache_seconds: float = 30.0
    token_refusal_cache_seconds: float = 5.0
    # `local`: tokens are checked here with the issuer's keys, pods against a watch-fed
    # mirror; `tokenreview`: one TokenReview and a pod GET per token per cache period.
    token_verification: str = "local"
    longest_wait_seconds: float = 60.0
    drain_outcome_seconds: float = 60.0
    drain_policy_cache_seconds: float = DEFAULT_CACHE_SECONDS  # how old a policy a drain may use
    # Protected namespaces a forced drain may still delete pods in (see DrainRules).
    force_namespaces_allowed: frozenset[str] = frozenset()
    feed_watch_seconds: float = WATCH_SECONDS  # each watch of the shadow feed, at least
    feed_restart: RestartSchedule = field(default_factory=RestartSchedule)
    threads: int = 32
    review_threads: int = 8
    webhook_port: int | None = None  # a port serving only /crdconvert, /ping and /readyz
    conversion: ConversionOptions = field(default_factory=ConversionOptions)
    status_pacing: StatusPacing = field(default_factory=StatusPacing)

    @property
    def drain_wait_seconds(self) -> float:
        """How long one drain request waits for the outcome before saying "ask again"."""
        return self.drain.timeout_seconds + self.drain.deletion_timeout_seconds + 30.0


class BackgroundWork(Protocol):
    """The workers that run while the app serves (the shadow feed, the agent pod mirror, the
    conversion worker): started before the first request, stopped after the drain waits end."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class ThreadLimit:
    """A sized threadpool limiter, made on first use inside the event loop."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._limiter: anyio.CapacityLimiter | None = None

    def __call__(self) -> anyio.CapacityLimiter:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self._size)
        return self._limiter


def starlette_app(
    *,
    handlers: Handlers,
    authorizer: Authorizer,
    metrics: ApiserverMetrics,
    conversion: ConversionRoute,
    closing: Closing,
    background: BackgroundWork,
    options: ApiserverOptions,
    review_threads: ThreadLimit,
) -> Starlette:
    """The Starlette app over the apiserver's services: routes, middleware, lifecycle.

    `app.state.begin_shutdown()` ends pending long-polls and drain waits early (the servers in
    `server.py` call it when they start to stop); `app.state.long_polls` is the agents'
    long-poll lane that the server's protocol answers. `background` starts with the app's
    lifespan and stops at its end.
    """

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await background.start()
        try:
            yield
        finally:
            await background.stop()

    renewals = DecisionRenewals(authorizer, review_threads)
    app = Starlette(
        routes=_routes(handlers, metrics, conversion),
        middleware=_middleware(authorizer, renewals, metrics, closing, options, review_threads),
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    app.state.begin_shutdown = closing.close
    # The agents' long-poll, answered below the app by the server's protocol (long_polls.py).
    app.state.long_polls = LongPolls(
        authorizer=authorizer,
        renewals=renewals,
        metrics=metrics,
        handlers=handlers,
        closing=closing,
        longest_wait_seconds=options.longest_wait_seconds,
    )
    return app


def _middleware(
    authorizer: Authorizer,
    renewals: DecisionRenewals,
    metrics: ApiserverMetrics,
    closing: Closing,
    options: ApiserverOptions,
    review_threads: ThreadLimit,
) -> list[Middleware]:
    """From the outside in: a bug's short 500, closing, the webhook port's paths, metrics, body
    limits, and the authorization of every protected path."""
    return [
        Middleware(UnexpectedErrorMiddleware),
        Middleware(CloseConnectionsMiddleware, closing=closing),
        Middleware(WebhookPortMiddleware, port=options.webhook_port),
        Middleware(MetricsMiddleware, metrics=metrics, routes=frozenset(PROTECTED) | OPEN_PATHS),
        Middleware(
            BodyLimitMiddleware,
            limits={"/crdconvert": CONVERSION_BODY_LIMIT},
            default=MAX_BODY_BYTES,
        ),
        Middleware(
            AuthorizationMiddleware,
            authorizer=authorizer,
            metrics=metrics,
            protected=PROTECTED,
            limiter=review_threads,
            renewals=renewals,
        ),
    ]


def _routes(
    handlers: Handlers, metrics: ApiserverMetrics, conversion: ConversionRoute
) -> list[Route]:
    return [
        Route("/ping", handlers.ping, methods=["GET"]),
        Route("/readyz", handlers.ready, methods=["GET"]),
        Route("/metrics", metrics.endpoint, methods=["GET"]),
        Route("/crdconvert", conversion.answer, methods=["POST"]),
        Route(RESOURCE, handlers.create_shadow, methods=["POST"]),
        Route(RESOURCE, handlers.update_status, methods=["PUT"]),
        Route(RESOURCE, handlers.read_shadow, methods=["GET"]),
        Route(f"{RESOURCE}/node-uid", handlers.node_uid, methods=["GET"]),
        Route(f"{RESOURCE}/cordon-and-drain", handlers.cordon_and_drain, methods=["POST"]),
        Route(f"{RESOURCE}/uncordon", handlers.uncordon, methods=["POST"]),
        Route(f"{RESOURCE}/exclude-from-lb", handlers.exclude_from_lb, methods=["POST"]),
        Route(
            f"{RESOURCE}/remove-exclusion-from-lb", handlers.remove_lb_exclusion, methods=["POST"]
        ),
    ]

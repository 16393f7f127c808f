"""Prometheus metrics of one apiserver app: requests, latencies, authorization outcomes, drains.

Each app has its own registry, so several apps (tests, `brupop simulate`) never collide.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

UNMATCHED_ROUTE = "unmatched"
OTHER_METHOD = "other"  # any method but the HTTP ones: a caller must not mint label values
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class ApiserverMetrics:
    """The apiserver's collectors, in a registry of their own."""

    def __init__(self, drains_in_progress: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "brupop_apiserver_requests",
            "HTTP requests answered, by route, method and status code.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "brupop_apiserver_request_duration_seconds",
            "Time to answer an HTTP request (long-polls and drains included), by route.",
            ["route", "method"],
            buckets=(0.005, 0.025, 0.1, 0.5, 1, 5, 15, 30, 60, 300, 900),
            registry=self.registry,
        )
        self.authorizations = Counter(
            "brupop_apiserver_authorizations",
            "Authorization decisions, by outcome.",
            ["outcome"],
            registry=self.registry,
        )
        self.drains = Gauge(
            "brupop_apiserver_drains_in_progress",
            "Node drains running now.",
            registry=self.registry,
        )
        self.drains.set_function(lambda: float(drains_in_progress()))

    async def endpoint(self, _request: Request) -> Response:
        """`GET /metrics` in the Prometheus text format."""
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


class MetricsMiddleware:
    """Counts and times every HTTP request, labelled by its route (known paths only)."""

    def __init__(self, app: ASGIApp, *, metrics: ApiserverMetrics, routes: frozenset[str]) -> None:
        self._app = app
        self._metrics = metrics
        self._routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        route = scope["path"] if scope["path"] in self._routes else UNMATCHED_ROUTE
        method = str(scope.get("method", ""))
        method = method if method in METHODS else OTHER_METHOD
        status = 500
        started = time.perf_counter()

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self._app(scope, receive, record_status)
        finally:
            self._metrics.requests.labels(route, method, str(status)).inc()
            self._metrics.latency.labels(route, method).observe(time.perf_counter() - started)

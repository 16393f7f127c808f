"""A controller's HTTP surface (`/status`, `/metrics`, probes) served on loopback over a
scripted fleet, for the tests of `brupop status`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from brupop.entrypoints.controller.http_server import ControllerHttpServer, Surface
from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics
from brupop.services.controller.service import ControllerService
from tests.unit.services.controller.fleet import Fleet


@contextmanager
def serve_controller(
    fleet: Fleet, *, limit: int = 1, tick: bool = True
) -> Iterator[tuple[str, ControllerService]]:
    """A controller of `fleet` (at most `limit` nodes updating) that has made one pass over it
    unless `tick` is False, served until the block ends: its base URL and the controller."""
    metrics = PrometheusRolloutMetrics()
    controller = fleet.controller(limit, metrics=metrics)
    if tick:
        controller.tick()
    server = ControllerHttpServer(Surface(metrics.exposition, controller), "127.0.0.1", 0)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}", controller
    finally:
        server.stop()

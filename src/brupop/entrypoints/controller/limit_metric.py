"""`brupop_max_concurrent_update`: the concurrency limit in force, as a gauge.

A dashboard shows how much of the limit a rollout uses (nodes outside Idle over this value);
the limit comes from `MAX_CONCURRENT_UPDATE` and is fixed for the process's life. `unlimited`
is +Inf, so the share used reads 0.
"""

from __future__ import annotations

import math

from prometheus_client import CollectorRegistry, Gauge

from brupop.domain.concurrency import ConcurrencyLimit


def publish_concurrency_limit(registry: CollectorRegistry, limit: ConcurrencyLimit) -> Gauge:
    """Register the gauge in `registry` (the controller's own) and set it to `limit`."""
    gauge = Gauge(
        "brupop_max_concurrent_update",
        "Nodes allowed outside Idle at once (MAX_CONCURRENT_UPDATE; +Inf when unlimited).",
        registry=registry,
    )
    gauge.set(math.inf if limit.maximum is None else limit.maximum)
    return gauge

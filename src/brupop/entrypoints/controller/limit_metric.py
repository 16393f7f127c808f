"""`brupop_max_concurrent_update`: the global concurrency limit the controller applies, as a
gauge.

A dashboard shows how much of the limit a rollout uses (nodes outside Idle over this value).
The limit is the update policy's `maxConcurrent` when set (a percentage is counted against the
opted-in nodes), else `MAX_CONCURRENT_UPDATE`; the controller sets it on every pass, so a
change of the policy or of the fleet's size shows at once. `unlimited` is +Inf, so the share
used reads 0.
"""

from __future__ import annotations

import math

from prometheus_client import CollectorRegistry, Gauge


def concurrency_limit_gauge(registry: CollectorRegistry) -> Gauge:
    """Register the gauge in `registry` (the controller's own)."""
    return Gauge(
        "brupop_max_concurrent_update",
        "Nodes allowed outside Idle at once: the policy's maxConcurrent when set, else "
        "MAX_CONCURRENT_UPDATE (+Inf when unlimited).",
        registry=registry,
    )


def limit_value(maximum: int | None) -> float:
    """The gauge's value for a limit of `maximum` nodes (None: unlimited)."""
    return math.inf if maximum is None else float(maximum)

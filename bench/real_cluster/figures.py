"""Figures from the raw readings: pure arithmetic, so the tests check it on samples."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

BRUPOP_USER_PREFIX = "system:serviceaccount:brupop-bottlerocket-aws:"


def percentile(values: list[float], fraction: float) -> float | None:
    """The nearest-rank percentile (None for no values)."""
    if not values:
        return None
    ranked = sorted(values)
    return ranked[max(0, math.ceil(fraction * len(ranked)) - 1)]


def spec_seen_delays(
    seen: Iterable[tuple[str, str, str, float]], changed: Mapping[tuple[str, str], float]
) -> list[float]:
    """For each (node, spec state) an agent saw, the seconds from the watch's first sight of
    that spec to the agent's (Idle is left out: it is every shadow's first state)."""
    delays = []
    for node, state, _version, at in seen:
        since = changed.get((node, state))
        if state != "Idle" and since is not None:
            delays.append(max(0.0, at - since))
    return delays


def requests_in(
    per_second: Mapping[str, Mapping[str, int]], start: float, end: float
) -> Counter[str]:
    """The generator's requests by kind whose wall second lies in [start, end)."""
    total: Counter[str] = Counter()
    for second, kinds in per_second.items():
        if start <= int(second) < end:
            total.update(kinds)
    return total


def brupop_load(audit: Mapping[tuple[str, ...], int], seconds: float, nodes: int) -> dict[str, Any]:
    """brupop's requests to kube-apiserver (the audit log's counts for its users): per second,
    per node per hour, and by user/verb/resource."""
    ours = {k: v for k, v in audit.items() if k[0].startswith(BRUPOP_USER_PREFIX)}
    total = sum(ours.values())
    by_key = {
        f"{user.removeprefix(BRUPOP_USER_PREFIX)} {verb} {resource}": count / seconds
        for (user, verb, resource), count in ours.items()
    }
    rate = total / seconds if seconds else 0.0
    watches = sum(count for (_, verb, _), count in ours.items() if verb == "watch")
    return {
        "brupop_requests": total,
        "brupop_requests_per_second": round(rate, 3),
        "brupop_watches_opened_per_minute": round(watches * 60 / seconds, 2) if seconds else None,
        "brupop_requests_per_node_per_hour": round(rate * 3600 / nodes, 3) if nodes else None,
        "brupop_by_user_verb_resource_per_second": {
            k: round(v, 4) for k, v in sorted(by_key.items(), key=lambda i: -i[1])
        },
    }


def per_agent_per_minute(
    requests: Mapping[str, float], agents: int, seconds: float
) -> dict[str, float]:
    if not agents or not seconds:
        return {}
    return {k: round(v * 60 / seconds / agents, 3) for k, v in sorted(requests.items()) if v}


def pass_cpu_ms(count: float, seconds: float) -> float | None:
    """Mean CPU ms of one tick from the pass CPU histogram's count and sum moved over a window
    (None when no tick ran)."""
    return round(seconds * 1000 / count, 3) if count > 0 else None


def change_cpu_ms(
    count: float, seconds: float, quiet_ms: float | None, changes: int
) -> float | None:
    """CPU ms one change added to the ticks of a window of `changes` changes: the ticks' CPU
    less what as many quiet ticks cost, per change."""
    if changes <= 0 or quiet_ms is None:
        return None
    extra = seconds * 1000 - quiet_ms * count
    return round(max(0.0, extra) / changes, 3)


def tick_shares(cumulative: Mapping[str, float]) -> dict[str, float]:
    """From a window's cumulative pass CPU buckets ({le: ticks with CPU <= le}): the share of
    ticks within 5 ms, the ticks above 100 ms (a resync or a start, not a quiet pass), and the
    smallest bucket bound holding half the ticks (the median tick, at most that)."""
    total = cumulative.get("+Inf", 0.0)
    if not total:
        return {}
    bounds = sorted((float(le), count) for le, count in cumulative.items() if le != "+Inf")
    within = dict(bounds)
    median = next((le for le, count in bounds if count >= total / 2), math.inf)
    return {
        "ticks": total,
        "within_5_ms_share": round(within.get(0.005, 0.0) / total, 4),
        "above_5_ms": total - within.get(0.005, 0.0),
        "above_100_ms": total - within.get(0.1, 0.0),
        "median_at_most_ms": median * 1000,
    }


QUIET_TICK_SECONDS = 0.1
"""A tick above this is no quiet pass (a full resync or a start)."""


def quiet_tick_bound_ms(cumulative: Mapping[str, float], cpu_seconds: float) -> float | None:
    """An upper bound of the mean CPU of the ticks at most QUIET_TICK_SECONDS, from a window's
    cumulative buckets and its CPU sum: the smaller of (each quiet tick at its bucket's upper
    bound) and (the sum less each slower tick at its bucket's lower bound)."""
    bounds = sorted((float(le), count) for le, count in cumulative.items() if le != "+Inf")
    total = cumulative.get("+Inf", 0.0)
    quiet_bucket_sum, slow_floor, below, quiet = 0.0, 0.0, 0.0, 0.0
    lower = 0.0
    for le, count in bounds:
        ticks = count - below
        if le <= QUIET_TICK_SECONDS:
            quiet_bucket_sum += ticks * le
            quiet += ticks
        else:
            slow_floor += ticks * lower
        below, lower = count, le
    slow_floor += (total - below) * lower  # above the last bound
    if not quiet:
        return None
    by_buckets = quiet_bucket_sum / quiet
    by_sum = max(0.0, cpu_seconds - slow_floor) / quiet
    return round(min(by_buckets, by_sum) * 1000, 3)

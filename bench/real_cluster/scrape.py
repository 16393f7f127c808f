"""Readings of Prometheus text (kube-apiserver's and etcd's /metrics) and of kube-apiserver's
audit log: pure functions over the text, so the tests feed them samples."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping

from prometheus_client.parser import text_string_to_metric_families

Key = tuple[str, ...]


def samples(text: str, name: str, labels: tuple[str, ...]) -> dict[Key, float]:
    """The values of metric `name` (a counter's `_total` sample or a gauge) summed by the
    given labels."""
    totals: dict[Key, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                key = tuple(sample.labels.get(label, "") for label in labels)
                totals[key] = totals.get(key, 0.0) + sample.value
    return totals


def delta(after: Mapping[Key, float], before: Mapping[Key, float]) -> dict[Key, float]:
    """after - before for each key, dropping keys that did not move."""
    moved = {key: after[key] - before.get(key, 0.0) for key in after}
    return {key: value for key, value in moved.items() if value}


def single(text: str, name: str) -> float:
    """The sum of a metric's samples (e.g. etcd_mvcc_db_total_size_in_bytes)."""
    return float(sum(samples(text, name, ()).values()))


def audit_counts(lines: Iterable[str], start: float, end: float) -> Counter[Key]:
    """Requests by (user, verb, resource) received in [start, end) wall time, each counted
    once: a watch when it opened (ResponseStarted), any other at ResponseComplete."""
    counts: Counter[Key] = Counter()
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        verb, stage = event.get("verb", ""), event.get("stage", "")
        opened = stage == "ResponseStarted" if verb == "watch" else stage == "ResponseComplete"
        if not opened:
            continue
        received = _seconds(event.get("requestReceivedTimestamp", ""))
        if received is None or not start <= received < end:
            continue
        user = event.get("user", {}).get("username", "")
        ref = event.get("objectRef") or {}
        resource = ref.get("resource", "") + (
            "/" + ref["subresource"] if "subresource" in ref else ""
        )
        counts[(user, verb, resource)] += 1
    return counts


def _seconds(stamp: str) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def open_watches(lines: Iterable[str], users: Iterable[str]) -> Counter[Key]:
    """Watches of `users` still open at the log's end, by (user, resource): each opened
    (ResponseStarted) and not yet ended (ResponseComplete, or Panic) under its audit ID."""
    wanted = set(users)
    opened: dict[str, Key] = {}
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("verb") != "watch":
            continue
        user = event.get("user", {}).get("username", "")
        if user not in wanted:
            continue
        audit_id, stage = event.get("auditID", ""), event.get("stage", "")
        if stage == "ResponseStarted":
            opened[audit_id] = (user, (event.get("objectRef") or {}).get("resource", ""))
        elif stage in ("ResponseComplete", "Panic"):
            opened.pop(audit_id, None)
    return Counter(opened.values())

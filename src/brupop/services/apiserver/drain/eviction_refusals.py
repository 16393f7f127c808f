"""EvictionRefusals: one drain's refused evictions, logged once per pod, then in a summary.

A PodDisruptionBudget can hold a pod for the whole drain timeout (15 minutes, a retry every
5 s): a line per refusal would be about 180 lines per blocked pod per drain. The first refusal
of each pod is logged with its reason; after that, one line per interval says which pods are
still refused and how many refusals came since the last line.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import structlog

from brupop.ports.clock import Clock

log = structlog.get_logger(__name__)


class EvictionRefusals:
    """Counts refusals for one drain; `refused` may be called from the eviction workers."""

    def __init__(self, node_name: str, clock: Clock, *, summary_interval_seconds: float) -> None:
        self._node = node_name
        self._clock = clock
        self._interval = summary_interval_seconds
        self._lock = threading.Lock()
        self._refusals: dict[str, int] = {}
        self._since_summary = 0
        self._summary_at = clock.monotonic() + summary_interval_seconds

    def refused(self, pod: str, reason: str) -> None:
        """One more refusal of `pod`'s eviction; the first is logged now."""
        with self._lock:
            count = self._refusals.get(pod, 0) + 1
            self._refusals[pod] = count
            if count > 1:
                self._since_summary += 1
        if count == 1:
            log.info(
                "drain.eviction_refused",
                node=self._node,
                pod=pod,
                reason=reason,
                retrying=f"until the drain timeout; a summary every {self._interval:g} s",
            )

    def summarize_if_due(self, still_refused: Iterable[str]) -> None:
        """After a round: once per interval, which pods are still refused, and how often."""
        now = self._clock.monotonic()
        with self._lock:
            if now < self._summary_at or not self._since_summary:
                return
            since, self._since_summary = self._since_summary, 0
            self._summary_at = now + self._interval
        log.info(
            "drain.evictions_still_refused",
            node=self._node,
            pods=sorted(still_refused),
            refusals_since_last_line=since,
        )

    def count(self, pod: str) -> int:
        """How many times `pod`'s eviction was refused in this drain."""
        with self._lock:
            return self._refusals.get(pod, 0)

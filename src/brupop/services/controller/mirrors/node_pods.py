"""NodePods: the pods of a start candidate, listed from the cluster and kept for a few seconds.

The blocking-pod rule reads a candidate's pods every pass in which it is tried; a fleet where
many candidates are held would otherwise list the same nodes again and again. A listing is kept
`ttl_seconds` (by the injected clock), for at most `max_nodes` nodes, and expired listings are
dropped once per `ttl_seconds` so the pods of a large fleet are not held; a failed listing is not
kept, logged at WARN without a traceback, and tried again by the next pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from brupop.domain.cluster.objects import Pod
from brupop.ports.clock import Clock
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import PortError

TTL_SECONDS = 5.0
MAX_NODES = 10_000


class _Listing(NamedTuple):
    """The pods listed on one node, and when (the monotonic clock)."""

    at: float
    pods: tuple[Pod, ...]


class NodePods:
    """`PodsOnNode` over a PodRepository, with a short per-node cache."""

    def __init__(
        self,
        pods: PodRepository,
        clock: Clock,
        log: Any,
        *,
        ttl_seconds: float = TTL_SECONDS,
        max_nodes: int = MAX_NODES,
    ) -> None:
        self._pods = pods
        self._clock = clock
        self._log = log
        self._ttl = ttl_seconds
        self._max = max_nodes
        self._kept: dict[str, _Listing] = {}
        self._swept = clock.monotonic()

    def __call__(self, node_name: str) -> Sequence[Pod] | None:
        """The pods on `node_name` (listed at most every `ttl_seconds`); None when they could
        not be read."""
        now = self._clock.monotonic()
        if now - self._swept >= self._ttl:
            self._forget_expired(now)
        kept = self._kept.get(node_name)
        if kept is not None and now - kept.at < self._ttl:
            return kept.pods
        try:
            pods = tuple(self._pods.list_on_node(node_name))
        except PortError as error:
            self._log.warning(
                "start_rules.pods_unreadable",
                node=node_name,
                error=type(error).__name__,
                reason=str(error),
            )
            return None
        if len(self._kept) < self._max:
            self._kept[node_name] = _Listing(now, pods)
        return pods

    def _forget_expired(self, now: float) -> None:
        self._swept = now
        self._kept = {n: k for n, k in self._kept.items() if now - k.at < self._ttl}

"""BreakableShadows: in-memory shadows whose watch raises, while `broken` is set, an exception
that no adapter translates into a PortError (a bug, a library surprise)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.shadows import InMemoryShadowRepository
from brupop.domain.cluster.objects import WatchEvent
from brupop.domain.shadow import Shadow


class UnexpectedWatchError(Exception):
    """What a broken watch raises: neither a PortError nor anything else the loops expect."""


class BreakableShadows(InMemoryShadowRepository):
    """Shadows whose `watch` raises UnexpectedWatchError while `broken` is set."""

    def __init__(self, cluster: InMemoryCluster) -> None:
        super().__init__(cluster.revisions, cluster.namespace)
        self.broken = threading.Event()
        self.broken.set()
        self._lock = threading.Lock()
        self._watch_calls = 0

    @property
    def watch_calls(self) -> int:
        """How many times a watch was asked for (each restart asks again)."""
        with self._lock:
            return self._watch_calls

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Shadow]]:
        with self._lock:
            self._watch_calls += 1
        if self.broken.is_set():
            raise UnexpectedWatchError("the watch met something nobody expected")
        return super().watch(resource_version, timeout_seconds)


def with_breakable_shadows(cluster: InMemoryCluster) -> BreakableShadows:
    """Give `cluster` breakable shadows (before any shadow is created) and return them."""
    shadows = BreakableShadows(cluster)
    cluster.shadows = shadows
    return shadows

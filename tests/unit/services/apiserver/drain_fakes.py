"""Fakes shared by the drain tests: a clock that moves the cluster on at each sleep, pods that
record evictions and deletions, and the two-node cluster the drains run on."""

from __future__ import annotations

from collections.abc import Callable

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Pod, PodDisruptionBudget
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.services.apiserver.drain.drainer import DrainTimings
from tests.fakes.clock import FakeClock

TIMINGS = DrainTimings(timeout_seconds=60, retry_interval_seconds=5, deletion_timeout_seconds=30)


class SteppingClock(FakeClock):
    """A FakeClock that runs a test's hook at every sleep (time passing in the cluster)."""

    def __init__(self) -> None:
        super().__init__()
        self.on_sleep: Callable[[], None] = lambda: None

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        self.on_sleep()


class RecordingPods:
    """The in-memory PodRepository, recording evictions and deletions (optionally ignoring them)."""

    def __init__(self, inner: PodRepository, *, evictions_take_effect: bool = True) -> None:
        self._inner = inner
        self._evictions_take_effect = evictions_take_effect
        self.evicted: list[str] = []
        self.deleted: list[str] = []

    def list_on_node(self, node_name: str) -> list[Pod]:
        return self._inner.list_on_node(node_name)

    def get(self, namespace: str, name: str) -> Pod:
        return self._inner.get(namespace, name)

    def evict(self, namespace: str, name: str, grace_period_seconds: int | None = None) -> None:
        self.evicted.append(f"{namespace}/{name}")
        if self._evictions_take_effect:
            self._inner.evict(namespace, name, grace_period_seconds)

    def delete(self, namespace: str, name: str) -> None:
        self.deleted.append(f"{namespace}/{name}")
        self._inner.delete(namespace, name)

    def list_disruption_budgets(self, namespace: str) -> list[PodDisruptionBudget]:
        return self._inner.list_disruption_budgets(namespace)

    def list_all(self) -> list[Pod]:
        return self._inner.list_all()

    def list_all_disruption_budgets(self) -> list[PodDisruptionBudget]:
        return self._inner.list_all_disruption_budgets()


def two_node_cluster(clock: SteppingClock) -> InMemoryCluster:
    """An in-memory cluster with nodes n1 (the one drained) and n2, on the given clock."""
    cluster = InMemoryCluster(clock=clock)
    cluster.add_node("n1")
    cluster.add_node("n2")
    return cluster

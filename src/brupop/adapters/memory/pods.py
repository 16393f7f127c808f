"""InMemoryPodRepository: pods on nodes, PodDisruptionBudgets, and evictions that honour them.

An evicted pod owned by a ReplicaSet or StatefulSet comes back on another schedulable node, as
its controller would recreate it; with no such node it waits, Pending, until one appears.
"""

from __future__ import annotations

import dataclasses
import itertools
import uuid
from collections.abc import Callable

from brupop.adapters.memory.store import Revisions, VersionedStore
from brupop.domain.cluster.disruption_budget import allows_one_more_gone
from brupop.domain.cluster.objects import Node, Pod, PodDisruptionBudget, PodPhase
from brupop.ports.errors import NotFoundError, TooManyRequestsError, UnavailableError

RECREATED_OWNER_KINDS = frozenset(
    {"ReplicaSet", "StatefulSet", "Deployment", "ReplicationController"}
)
GRACE_PERIODS_KEPT = 10_000


def pod_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _placed_on(node_name: str) -> Callable[[Pod], Pod]:
    return lambda pod: dataclasses.replace(
        pod, node_name=node_name, phase=PodPhase.RUNNING, ready=True
    )


class InMemoryPodRepository:
    """The PodRepository port, plus the setup calls tests and the simulation use."""

    def __init__(self, revisions: Revisions, nodes: VersionedStore[Node]) -> None:
        self._nodes = nodes
        self.store: VersionedStore[Pod] = VersionedStore(
            revisions, "pod", with_version=lambda p, _rv: p, version_of=lambda _p: None
        )
        self.budgets: dict[str, PodDisruptionBudget] = {}
        self.evictions_refused = 0
        # `namespace/name` -> the grace period its last eviction asked for (None: the pod's own).
        self.eviction_grace_periods: dict[str, int | None] = {}
        self.unavailable = False
        self._suffix = itertools.count(1)

    # --- the port --------------------------------------------------------------------

    def list_on_node(self, node_name: str) -> list[Pod]:
        self._check_available()
        return list(self.store.list(lambda p: p.node_name == node_name).items)

    def list_all(self) -> list[Pod]:
        self._check_available()
        return list(self.store.list(lambda p: not p.finished).items)

    def get(self, namespace: str, name: str) -> Pod:
        self._check_available()
        return self.store.get(pod_key(namespace, name))

    def evict(self, namespace: str, name: str, grace_period_seconds: int | None = None) -> None:
        self._check_available()
        with self.store.lock:
            pod = self.store.get(pod_key(namespace, name))
            self._remember_grace_period(pod_key(namespace, name), grace_period_seconds)
            blocker = self._blocking_budget(pod)
            if blocker is not None:
                self.evictions_refused += 1
                raise TooManyRequestsError(
                    f"Cannot evict pod as it would violate the pod's disruption budget "
                    f"{blocker.namespace}/{blocker.name}"
                )
            self.store.delete(pod_key(namespace, name))
            if any(owner.kind in RECREATED_OWNER_KINDS for owner in pod.owners):
                self._recreate(pod)

    def delete(self, namespace: str, name: str) -> None:
        self._check_available()
        self.store.delete(pod_key(namespace, name))

    def list_disruption_budgets(self, namespace: str) -> list[PodDisruptionBudget]:
        self._check_available()
        with self.store.lock:
            return [b for b in self.budgets.values() if b.namespace == namespace]

    def list_all_disruption_budgets(self) -> list[PodDisruptionBudget]:
        self._check_available()
        with self.store.lock:
            return list(self.budgets.values())

    # --- setup and scheduling ----------------------------------------------------------

    def add(self, pod: Pod) -> Pod:
        return self.store.create(pod_key(pod.namespace, pod.name), pod)

    def set_budget(self, budget: PodDisruptionBudget) -> None:
        with self.store.lock:
            self.budgets[pod_key(budget.namespace, budget.name)] = budget
            self.store.lock.notify_all()

    def remove_budget(self, namespace: str, name: str) -> None:
        with self.store.lock:
            if self.budgets.pop(pod_key(namespace, name), None) is None:
                raise NotFoundError(f"poddisruptionbudget {namespace}/{name} not found")

    def schedule_pending(self) -> None:
        """Place Pending replacement pods on schedulable nodes (a node was uncordoned or added)."""
        with self.store.lock:
            for pod in self.store.values():
                if pod.node_name is None:
                    target = self._pick_node(exclude=None)
                    if target is not None:
                        key = pod_key(pod.namespace, pod.name)
                        self.store.update(key, _placed_on(target))

    def remove_pods_on(self, node_name: str) -> None:
        with self.store.lock:
            for pod in self.store.list(lambda p: p.node_name == node_name).items:
                self.store.delete(pod_key(pod.namespace, pod.name))

    # --- internals -----------------------------------------------------------------------

    def _remember_grace_period(self, key: str, seconds: int | None) -> None:
        # Bounded: a long simulation evicts ever new replacement pods.
        self.eviction_grace_periods.pop(key, None)
        self.eviction_grace_periods[key] = seconds
        while len(self.eviction_grace_periods) > GRACE_PERIODS_KEPT:
            del self.eviction_grace_periods[next(iter(self.eviction_grace_periods))]

    def _check_available(self) -> None:
        if self.unavailable:
            raise UnavailableError("the in-memory cluster is set to fail pod calls")

    def _blocking_budget(self, pod: Pod) -> PodDisruptionBudget | None:
        for budget in self.budgets.values():
            if not budget.selects(pod):
                continue
            selected = self.store.list(budget.selects).items
            healthy = [p for p in selected if p.phase is PodPhase.RUNNING and not p.terminating]
            if not allows_one_more_gone(
                budget.min_available,
                budget.max_unavailable,
                selected=len(selected),
                healthy=len(healthy),
            ):
                return budget
        return None

    def _recreate(self, pod: Pod) -> None:
        target = self._pick_node(exclude=pod.node_name)
        statefulset = any(owner.kind == "StatefulSet" for owner in pod.owners)
        name = pod.name if statefulset else f"{pod.name.rsplit('-', 1)[0]}-r{next(self._suffix)}"
        replacement = dataclasses.replace(
            pod,
            name=name,
            uid=str(uuid.uuid4()),
            node_name=target,
            phase=PodPhase.RUNNING if target else PodPhase.PENDING,
            ready=target is not None,
        )
        self.add(replacement)

    def _pick_node(self, exclude: str | None) -> str | None:
        candidates = [
            n.name
            for n in self._nodes.values()
            if not (n.unschedulable or n.deleting) and n.name != exclude
        ]
        if not candidates:
            return None
        load = {name: 0 for name in candidates}
        for pod in self.store.values():
            if pod.node_name in load:
                load[pod.node_name] += 1
        return min(candidates, key=lambda name: (load[name], name))

"""FleetCensus: one moment's Nodes, pods and PodDisruptionBudgets, read together, and what the
start order and the capacity check ask of them (a node's drain cost, whether its pods fit).

Built once per census (see services/controller/mirrors/pod_census.py) and read by every start
decision until the next one: the per-node room is computed once, not per candidate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from brupop.domain.capacity.eviction_cost import (
    budgets_by_namespace,
    evicted_by_drain,
    eviction_cost,
)
from brupop.domain.capacity.room import FreeRoom, free_room
from brupop.domain.cluster.objects import Node, Pod, PodDisruptionBudget


@dataclass(frozen=True)
class FleetCensus:
    """Nodes, the unfinished pods on each, and the budgets by namespace, as of `taken_at`."""

    taken_at: datetime
    nodes: tuple[Node, ...]
    pods_by_node: Mapping[str, tuple[Pod, ...]]
    budgets: Mapping[str, Sequence[PodDisruptionBudget]]
    room: FreeRoom

    @classmethod
    def of(
        cls,
        taken_at: datetime,
        nodes: Iterable[Node],
        pods: Iterable[Pod],
        budgets: Iterable[PodDisruptionBudget],
    ) -> FleetCensus:
        """The census of these lists (pods not yet scheduled on a node, and finished ones, are
        left out: neither takes room nor is evicted, and a cluster may keep many of them)."""
        fleet = tuple(sorted(nodes, key=lambda n: n.name))
        by_node: dict[str, list[Pod]] = {}
        for pod in pods:
            if pod.node_name and not pod.finished:
                by_node.setdefault(pod.node_name, []).append(pod)
        pods_by_node = {name: tuple(found) for name, found in by_node.items()}
        return cls(
            taken_at=taken_at,
            nodes=fleet,
            pods_by_node=pods_by_node,
            budgets=budgets_by_namespace(budgets),
            room=free_room(fleet, pods_by_node),
        )

    def pods_on(self, node_name: str) -> tuple[Pod, ...]:
        """The unfinished pods on `node_name` (none for a node the census does not know)."""
        return self.pods_by_node.get(node_name, ())

    def evicted(self, node_name: str) -> tuple[Pod, ...]:
        """The pods a drain of `node_name` would evict."""
        return evicted_by_drain(self.pods_on(node_name))

    def cost(self, node_name: str) -> int:
        """The drain cost of `node_name` (eviction_cost): 0 for an empty node."""
        return self.costs.get(node_name, 0)

    @cached_property
    def costs(self) -> Mapping[str, int]:
        """Every node's drain cost, computed once per census (the start order asks for all)."""
        return {name: eviction_cost(pods, self.budgets) for name, pods in self.pods_by_node.items()}

"""What draining a node would cost: the pods it would evict, each weighed by how much it hurts.

The evicted pods are those `kubectl drain --ignore-daemonsets` evicts (drain_progress.must_leave:
not DaemonSet-owned, not a mirror pod, not finished, not already terminating). Each counts 1,
and 2 when a PodDisruptionBudget of its namespace selects it (its eviction may be refused and
slow the drain, and it matters to someone). The cheapest-first order starts the nodes with the
lowest cost, so empty and brand-new nodes update before they take workloads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from brupop.domain.cluster.drain_progress import must_leave
from brupop.domain.cluster.objects import Pod, PodDisruptionBudget

GUARDED_POD_WEIGHT = 2
PLAIN_POD_WEIGHT = 1

BudgetsByNamespace = Mapping[str, Sequence[PodDisruptionBudget]]


def evicted_by_drain(pods: Iterable[Pod]) -> tuple[Pod, ...]:
    """The pods a drain of their node would evict, by namespace and name."""
    return tuple(sorted((p for p in pods if must_leave(p)), key=lambda p: (p.namespace, p.name)))


def budgets_by_namespace(
    budgets: Iterable[PodDisruptionBudget],
) -> dict[str, list[PodDisruptionBudget]]:
    """The budgets grouped by namespace (a pod is only ever selected by its namespace's)."""
    grouped: dict[str, list[PodDisruptionBudget]] = defaultdict(list)
    for budget in budgets:
        grouped[budget.namespace].append(budget)
    return dict(grouped)


def pod_weight(pod: Pod, budgets: BudgetsByNamespace) -> int:
    """2 when a budget selects the pod, else 1."""
    guarded = any(budget.selects(pod) for budget in budgets.get(pod.namespace, ()))
    return GUARDED_POD_WEIGHT if guarded else PLAIN_POD_WEIGHT


def eviction_cost(pods: Iterable[Pod], budgets: BudgetsByNamespace) -> int:
    """The cost of draining the node these pods run on (0 for a node with nothing to evict)."""
    return sum(pod_weight(pod, budgets) for pod in pods if must_leave(pod))

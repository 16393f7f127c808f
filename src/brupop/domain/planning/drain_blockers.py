"""Which PodDisruptionBudgets would refuse a node's drain, as the cluster stands.

A drain evicts the pods `kubectl drain --ignore-daemonsets` would (`drain_progress.must_leave`);
the eviction API refuses one when a budget that selects it would fall below its minAvailable
or above its maxUnavailable with one more pod gone (`disruption_budget.allows_one_more_gone`).
Healthy means running, Ready and not terminating, as the disruption controller counts it. The
plan does not move pods: a budget that blocks now is taken to block at the node's turn too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from brupop.domain.cluster.disruption_budget import allows_one_more_gone
from brupop.domain.cluster.drain_progress import must_leave
from brupop.domain.cluster.objects import Pod, PodDisruptionBudget, PodPhase


def _healthy(pod: Pod) -> bool:
    return pod.phase is PodPhase.RUNNING and pod.ready and not pod.terminating


def refusing_budgets(
    pods: Sequence[Pod], budgets: Iterable[PodDisruptionBudget]
) -> dict[str, list[PodDisruptionBudget]]:
    """By namespace, the budgets that would refuse one more eviction now (each budget's pods
    are counted once, whatever the number of nodes asked about)."""
    by_namespace: dict[str, list[Pod]] = {}
    for pod in pods:
        if not pod.finished:
            by_namespace.setdefault(pod.namespace, []).append(pod)
    refusing: dict[str, list[PodDisruptionBudget]] = {}
    for budget in sorted(budgets, key=lambda b: (b.namespace, b.name)):
        selected = [p for p in by_namespace.get(budget.namespace, ()) if budget.selects(p)]
        healthy = sum(1 for p in selected if _healthy(p))
        if not allows_one_more_gone(
            budget.min_available, budget.max_unavailable, selected=len(selected), healthy=healthy
        ):
            refusing.setdefault(budget.namespace, []).append(budget)
    return refusing


def drain_blockers(
    pods_on_node: Iterable[Pod], refusing: Mapping[str, Sequence[PodDisruptionBudget]]
) -> tuple[str, ...]:
    """One sentence per pod of a node whose eviction a budget of `refusing` (by namespace)
    would refuse, e.g. `PDB default/cache allows no disruption of pod default/cache-0`."""
    found: list[str] = []
    leaving = sorted(
        (p for p in pods_on_node if must_leave(p)), key=lambda p: (p.namespace, p.name)
    )
    for pod in leaving:
        budget = next((b for b in refusing.get(pod.namespace, ()) if b.selects(pod)), None)
        if budget is not None:
            found.append(
                f"PDB {budget.namespace}/{budget.name} allows no disruption of pod "
                f"{pod.namespace}/{pod.name}"
            )
    return tuple(found)

"""Drain progress as the controller can see it: which pods still have to leave a cordoned node
and which PodDisruptionBudgets cover them (the usual reason a drain does not finish)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brupop.domain.cluster.objects import MIRROR_POD_ANNOTATION, Pod, PodDisruptionBudget

_STAYING_OWNERS = frozenset({"DaemonSet"})


def must_leave(pod: Pod) -> bool:
    """A drain evicts this pod: not a DaemonSet or mirror pod, still running, not leaving yet
    (the same pods `kubectl drain --ignore-daemonsets` evicts)."""
    if pod.finished or pod.terminating:
        return False
    if MIRROR_POD_ANNOTATION in pod.annotations:
        return False
    return not any(owner.controller and owner.kind in _STAYING_OWNERS for owner in pod.owners)


@dataclass(frozen=True)
class DrainProgress:
    """The pods a drain still has to move off a node, and the budgets that guard them."""

    remaining: tuple[str, ...]
    budgets: tuple[str, ...]

    @property
    def done(self) -> bool:
        """Nothing left to evict."""
        return not self.remaining

    def describe(self) -> str:
        """`PodDisruptionBudget ns/a (pod ns/p)` or `N pods still on the node`."""
        pods = ", ".join(self.remaining[:3]) + (" ..." if len(self.remaining) > 3 else "")
        if self.budgets:
            kind = "PodDisruptionBudget" if len(self.budgets) == 1 else "PodDisruptionBudgets"
            return f"{kind} {', '.join(self.budgets)} (pods {pods})"
        return f"{len(self.remaining)} pods still on the node ({pods})"


def drain_progress(pods: Iterable[Pod], budgets: Iterable[PodDisruptionBudget]) -> DrainProgress:
    """What is left of a drain, given the node's pods and the budgets of their namespaces."""
    staying = sorted((p for p in pods if must_leave(p)), key=lambda p: (p.namespace, p.name))
    guards = list(budgets)
    covering = {
        f"{budget.namespace}/{budget.name}"
        for pod in staying
        for budget in guards
        if budget.selects(pod)
    }
    return DrainProgress(
        remaining=tuple(f"{p.namespace}/{p.name}" for p in staying),
        budgets=tuple(sorted(covering)),
    )

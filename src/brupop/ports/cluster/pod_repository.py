"""PodRepository: the pods on a node, their budgets, and the eviction API a drain uses."""

from __future__ import annotations

from typing import Protocol

from brupop.domain.cluster.objects import Pod, PodDisruptionBudget


class PodRepository(Protocol):
    """Pods by node, single pods, PodDisruptionBudgets, evictions and deletions."""

    def list_on_node(self, node_name: str) -> list[Pod]:
        """Every pod scheduled on `node_name`, in all namespaces."""
        ...

    def list_all(self) -> list[Pod]:
        """Every pod in every namespace that has not finished (phase neither Succeeded nor
        Failed), scheduled or not: what the capacity check and the start order count."""
        ...

    def get(self, namespace: str, name: str) -> Pod:
        """One pod; NotFoundError when it is gone."""
        ...

    def evict(self, namespace: str, name: str, grace_period_seconds: int | None = None) -> None:
        """Ask to evict the pod (policy/v1), giving it `grace_period_seconds` to stop (None:
        the pod's own terminationGracePeriodSeconds). TooManyRequestsError when a budget
        refuses, NotFoundError when it is already gone."""
        ...

    def delete(self, namespace: str, name: str) -> None:
        """Delete the pod outright, without eviction (pods that already finished, or a drain's
        forced pods); NotFoundError when it is already gone."""
        ...

    def list_disruption_budgets(self, namespace: str) -> list[PodDisruptionBudget]:
        """The PodDisruptionBudgets of `namespace`, to name a drain's blockers."""
        ...

    def list_all_disruption_budgets(self) -> list[PodDisruptionBudget]:
        """The PodDisruptionBudgets of every namespace."""
        ...

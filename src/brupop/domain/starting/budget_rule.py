"""Budgets: at most so many nodes of each node group outside Idle at once.

A budget groups the opted-in nodes by the value of one Node label (`groupBy`, e.g.
`topology.kubernetes.io/zone`); nodes without that label form a group of their own. Its limit
is a count, or a percentage of the group's opted-in nodes (rounded down, at least 1). The nodes
in use are the group's nodes holding a slot (read from the shadows each pass, so a budget holds
across controller restarts and leader changes as the global limit does) plus those started
earlier in the same pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import NamedTuple

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.scheduling_policy import Budget, concurrency_limit
from brupop.domain.reason import Reason
from brupop.domain.starting.start_holds import StartCandidate, StartHold


def group_of(node: Node | None, key: str) -> str:
    """The group `node` belongs to under the label `key` (its own group when unlabelled)."""
    value = node.labels.get(key) if node is not None else None
    return value if value else f"(no {key})"


def short_name(key: str) -> str:
    """What REASON calls a budget: its label key's last path segment (`zone`, `nodegroup`)."""
    return key.rsplit("/", 1)[-1]


def group_sizes(nodes: Iterable[Node], key: str) -> Counter[str]:
    """How many opted-in nodes each group of `key` has."""
    return Counter(group_of(node, key) for node in nodes)


class BudgetUse(NamedTuple):
    """One group of one budget: nodes outside Idle against its limit."""

    budget: str  # the groupBy key
    group: str
    in_use: int
    limit: int


class BudgetRule:
    """A StartRule holding the candidates whose group has used up its budget."""

    def __init__(
        self, budget: Budget, sizes: Mapping[str, int], in_use: Iterable[Node | None]
    ) -> None:
        """`sizes`: opted-in nodes per group; `in_use`: the Nodes of the shadows holding a
        slot (None when the mirror lacks one: it counts in the unlabelled group)."""
        self._key = budget.group_by
        self._value = budget.max_concurrent
        self._sizes = sizes
        self._in_use = Counter(group_of(node, self._key) for node in in_use)

    def limit(self, group: str) -> int:
        """The nodes of `group` that may be outside Idle at once."""
        return concurrency_limit(self._value, max(1, self._sizes.get(group, 0)))

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        """Held when the candidate's group is at its limit."""
        group = group_of(candidate.node, self._key)
        used, limit = self._in_use[group], self.limit(group)
        if used < limit:
            return None
        return StartHold(Reason.BUDGET_FULL, f"{short_name(self._key)} {group} at {used}/{limit}")

    def started(self, candidate: StartCandidate) -> None:
        """The candidate's group has one more node in use."""
        self._in_use[group_of(candidate.node, self._key)] += 1

    def usage(self) -> list[BudgetUse]:
        """Every group (those with nodes, and those in use), by name."""
        groups = sorted(set(self._sizes) | {g for g, n in self._in_use.items() if n})
        return [BudgetUse(self._key, g, self._in_use[g], self.limit(g)) for g in groups]

"""The order in which ready nodes are tried for a start, as the policy's `order` asks.

`name` keeps the book's order: the controller's node last, fewest crashes, then by name.
`cheapest-first` tries first the nodes whose drain would evict the least (an eviction cost,
e.g. pods behind a PodDisruptionBudget counting double), so empty and brand-new nodes update
before they take workloads; ties keep the book's order. A cost the source does not know counts
as 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from brupop.domain.starting.start_holds import StartCandidate


class EvictionCosts(Protocol):
    """What a node's drain would cost, by node name."""

    def cost(self, node_name: str) -> int | None:
        """The eviction cost of `node_name`'s drain; None when unknown."""
        ...


def cheapest_first(
    candidates: Iterable[StartCandidate], costs: EvictionCosts, controller_node: str | None
) -> list[StartCandidate]:
    """`candidates` (given in the book's order) sorted by (controller's node last, eviction
    cost); the sort is stable, so equal costs keep fewest crashes, then name."""

    def key(candidate: StartCandidate) -> tuple[bool, int]:
        last = controller_node is not None and candidate.node_name == controller_node
        return (last, costs.cost(candidate.node_name) or 0)

    return sorted(candidates, key=key)

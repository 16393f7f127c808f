"""StartSelection: which of the ready nodes one pass starts, and why the others it tried wait.

The book (and the full recomputation, `rollout.plan_rollout`) hand it the ready nodes in their
order and the number of free slots; it orders them as the policy asks (`start_order`), tries
them through the start rules (`start_holds.choose_starts`) and keeps the holds it met, for the
REASON column. Candidates are built in small batches, so with no cost ordering a pass costs the
candidates tried, not every ready node; with neither rules nor costs it is the plain
`ready[:free]` of before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

from brupop.domain.starting.start_holds import StartCandidate, StartHold, StartRule, choose_starts
from brupop.domain.starting.start_order import EvictionCosts, cheapest_first

BATCH = 64  # candidates built at a time when no cost order needs them all


class StartSelection:
    """One pass's choice among the ready nodes (single use: the rules count what starts)."""

    def __init__(
        self,
        rules: tuple[StartRule, ...],
        candidate_of: Callable[[str], StartCandidate],
        now: datetime,
        *,
        costs: EvictionCosts | None = None,
        controller_node: str | None = None,
    ) -> None:
        self._rules = rules
        self._candidate_of = candidate_of
        self._now = now
        self._costs = costs
        self._controller_node = controller_node
        self.holds: dict[str, StartHold] = {}
        """The candidates a rule held in this pass, by shadow name."""

    def __call__(self, ready: list[str], free: int) -> list[str]:
        """Up to `free` of `ready` (shadow names in the book's order) to start, in order."""
        if not self._rules and self._costs is None:
            return ready[:free]
        starts: list[str] = []
        for batch in self._batches(ready):
            if len(starts) >= free:
                break
            choice = choose_starts(batch, free - len(starts), self._rules, self._now)
            starts += [candidate.shadow for candidate in choice.starts]
            self.holds.update(choice.holds)
        return starts

    def _batches(self, ready: list[str]) -> Iterator[list[StartCandidate]]:
        of = self._candidate_of
        if self._costs is not None:
            ordered = cheapest_first(map(of, ready), self._costs, self._controller_node)
            for start in range(0, len(ordered), BATCH):
                yield ordered[start : start + BATCH]
            return
        for start in range(0, len(ready), BATCH):
            yield [of(name) for name in ready[start : start + BATCH]]

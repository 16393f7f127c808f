"""Why each node waited: the REASON codes and sentences of `brupop status` it showed while
waiting, sampled from the controller's rows during the run, each kept once, in the order first
seen.

The controller's own /status only tells the latest; a node that waited on its zone's budget,
then on the global limit, then started shows nothing of that at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from brupop.domain.reporting.waiting_reason import NodeReport

MAX_WAIT_REASONS = 20  # per node; a sentence with a changing number could otherwise grow


class WaitReasons:
    """The distinct waiting reasons of every node of the fleet (called from one thread)."""

    def __init__(self, nodes: Sequence[str], *, every: float) -> None:
        self._seen: dict[str, dict[tuple[str, str], None]] = {name: {} for name in nodes}
        self._every = every  # the controller's tick: its rows change no faster
        self._last: float | None = None

    def step(self, rows: Callable[[], Iterable[NodeReport]], now: float) -> None:
        """Take the rows of `rows()` if a tick has passed since the last sample."""
        if self._last is None or now - self._last >= self._every:
            self._last = now
            self.record(rows())

    def record(self, rows: Iterable[NodeReport]) -> None:
        """Take one set of `brupop status` rows; rows of nodes not waiting are skipped."""
        for row in rows:
            seen = self._seen.get(row.node)
            if seen is None or not row.reason.is_waiting or len(seen) >= MAX_WAIT_REASONS:
                continue
            seen.setdefault((row.reason.value, row.detail), None)

    def of(self, node: str) -> list[dict[str, str]]:
        """`[{"reason": code, "detail": sentence}, ...]`, first seen first."""
        return [{"reason": reason, "detail": detail} for reason, detail in self._seen.get(node, {})]

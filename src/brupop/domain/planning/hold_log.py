"""HoldLog: what held each node, pass after pass, as spans with the moments they lift.

A virtual pass notes the hold of every node it did not start; the same reason on consecutive
passes is one span (its first sentence kept), a new reason closes the span before it, and a
start closes the node's open span. A span still open when the plan ends lifts at None.
"""

from __future__ import annotations

from datetime import datetime

from brupop.domain.planning.fleet_plan import PlannedHold
from brupop.domain.starting.start_holds import StartHold

MAX_SPANS_PER_NODE = 50  # a node held by ever-changing reasons still gets a short line


class HoldLog:
    """Every node's hold spans so far."""

    def __init__(self) -> None:
        self._closed: dict[str, list[PlannedHold]] = {}
        self._open: dict[str, PlannedHold] = {}

    def note(self, name: str, hold: StartHold, now: datetime) -> None:
        """`name` is held by `hold` at `now`."""
        current = self._open.get(name)
        if current is not None and current.reason is hold.reason:
            return
        self.lifted(name, now)
        self._open[name] = PlannedHold(hold.reason, hold.detail, now, None)

    def lifted(self, name: str, now: datetime) -> None:
        """Whatever held `name` lifted at `now` (it starts, or is no longer held)."""
        current = self._open.pop(name, None)
        if current is None:
            return
        spans = self._closed.setdefault(name, [])
        if len(spans) < MAX_SPANS_PER_NODE:
            spans.append(current._replace(until=now))

    def spans(self, name: str) -> tuple[PlannedHold, ...]:
        """`name`'s spans, oldest first, the open one (if any) last."""
        current = self._open.get(name)
        closed = self._closed.get(name, [])
        return (*closed, current) if current is not None else tuple(closed)

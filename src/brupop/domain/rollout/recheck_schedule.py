"""RecheckSchedule: when each shadow's decision may change by time alone (a backoff's end, a
transition's deadline), in a heap, so that a pass names only the shadows due."""

from __future__ import annotations

import heapq
from datetime import datetime

SLACK = 64
"""Replaced entries the heap may hold beyond twice the live ones before it is rebuilt."""


class RecheckSchedule:
    """One moment per shadow name; the latest one set counts."""

    def __init__(self) -> None:
        self._heap: list[tuple[datetime, str]] = []
        self._at: dict[str, datetime] = {}

    def at(self, name: str) -> datetime | None:
        """When `name` is to be decided again, if ever."""
        return self._at.get(name)

    def set(self, name: str, moment: datetime) -> None:
        """Decide `name` again at `moment` (instead of any moment set before)."""
        self._at[name] = moment
        heapq.heappush(self._heap, (moment, name))
        if len(self._heap) > 2 * len(self._at) + SLACK:
            # Entries replaced by later moments are skipped when popped; rebuild the heap
            # before they outnumber the live ones, so it stays as large as the fleet.
            self._heap = [(when, n) for n, when in self._at.items()]
            heapq.heapify(self._heap)

    def cancel(self, name: str) -> None:
        """`name` needs no recheck (nothing when it had none)."""
        self._at.pop(name, None)

    def due(self, now: datetime) -> list[str]:
        """The names whose moment has come by `now`, each once; they are taken off."""
        names: list[str] = []
        heap, at = self._heap, self._at
        while heap and heap[0][0] <= now:
            moment, name = heapq.heappop(heap)
            if at.get(name) == moment:
                del at[name]
                names.append(name)
        return names

"""UpdateDurations: how long the last nodes' updates took, and what the next one is expected to.

A node's update runs from its start (the controller moves its spec out of Idle) until its
agent reports Idle again on the new version. The expected duration is the 90th percentile,
nearest-rank, of the last 20 durations: the time that 9 in 10 recent updates stayed within,
taken from the values seen (no interpolation), so one slow node in twenty does not move it.
Before any history there is a fixed guess of 15 minutes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

HISTORY_SIZE = 20
DEFAULT_EXPECTED_SECONDS = 900
PERCENTILE = 90
MAX_DURATION_SECONDS = 7 * 86_400
"""A duration is clamped to a week: a node stuck longer says nothing more about the next."""


def expected_update_seconds(durations: Sequence[int]) -> int:
    """The 90th percentile (nearest rank) of `durations`; 900 when there are none."""
    if not durations:
        return DEFAULT_EXPECTED_SECONDS
    ordered = sorted(durations)
    rank = math.ceil(PERCENTILE / 100 * len(ordered))
    return ordered[rank - 1]


@dataclass(frozen=True)
class UpdateDurations:
    """The last `HISTORY_SIZE` update durations in whole seconds, oldest first."""

    seconds: tuple[int, ...] = ()

    @classmethod
    def of(cls, values: Iterable[float]) -> UpdateDurations:
        """A history from stored values (e.g. a policy status), each clamped, the last kept."""
        kept = tuple(_clamp(v) for v in values)
        return cls(kept[-HISTORY_SIZE:])

    @property
    def expected_seconds(self) -> int:
        """What the next update is expected to take."""
        return expected_update_seconds(self.seconds)


def _clamp(seconds: float) -> int:
    return min(max(0, round(seconds)), MAX_DURATION_SECONDS)

"""RecalledFailures: the timeouts and failed health gates a node's REASON recalls for a day.

The pass adds what its writes met; every view shows a copy; a day later they are forgotten.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from brupop.domain.reporting.waiting_reason import GateFailureRecord, TimeoutRecord
from brupop.domain.rollout.rollout_book import RolloutBook

_TIMEOUT_MEMORY = timedelta(hours=25)


class RecalledFailures:
    """The recent timeouts and gate failures, by shadow name."""

    def __init__(self) -> None:
        self.timeouts: dict[str, TimeoutRecord] = {}
        self.gate_failures: dict[str, GateFailureRecord] = {}

    def timed_out(self, records: Mapping[str, TimeoutRecord]) -> None:
        """Remember the shadows a write sent back for taking too long."""
        self.timeouts.update(records)

    def gate_failed(self, records: Mapping[str, GateFailureRecord]) -> None:
        """Remember the shadows whose node failed its health gate."""
        self.gate_failures.update(records)

    def forget_old(self, book: RolloutBook, now: datetime) -> None:
        """Forget what is older than a day, and the shadows that are gone."""
        self.timeouts = {
            name: record
            for name, record in self.timeouts.items()
            if name in book and now - record.at < _TIMEOUT_MEMORY
        }
        self.gate_failures = {
            name: record
            for name, record in self.gate_failures.items()
            if name in book and now - record.at < _TIMEOUT_MEMORY
        }

"""Clock: time comes in through here, so waits and windows are tested without sleeping."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    """Wall time for records, monotonic time for intervals, and sleeping."""

    def now(self) -> datetime:
        """The current UTC time, timezone-aware."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait `seconds`."""
        ...

"""SystemClock: the real wall clock, monotonic clock and sleep."""

from __future__ import annotations

import time
from datetime import UTC, datetime


class SystemClock:
    """The Clock port over `time` and `datetime`."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

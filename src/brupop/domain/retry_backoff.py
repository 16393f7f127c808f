"""Backoff: how long to wait after failures in a row, one formula for every retry and restart.

The wait doubles from `first_seconds` with each failure up to `cap_seconds`; given a draw in
[0, 1) it is full jitter (a uniform wait below that ceiling, so that many clients that failed
together do not retry together). Pure: the caller counts the failures and supplies the draw.
"""

from __future__ import annotations

from collections.abc import Callable

from brupop.domain.value_objects import value_object

_LARGEST_EXPONENT = 1000  # 2.0**1024 overflows a float; any cap is reached long before


@value_object
class Backoff:
    """Waits of `first_seconds` doubled per failure, never above `cap_seconds`."""

    first_seconds: float
    cap_seconds: float

    def ceiling(self, failures: int) -> float:
        """The wait after `failures` failures in a row (1: `first_seconds`; 0 counts as 1)."""
        exponent = min(max(failures - 1, 0), _LARGEST_EXPONENT)
        return min(self.cap_seconds, self.first_seconds * 2.0**exponent)

    def delay(self, failures: int, draw: Callable[[], float] | None = None) -> float:
        """The wait after `failures` failures: the ceiling, or with `draw` (uniform in [0, 1))
        full jitter below it."""
        ceiling = self.ceiling(failures)
        return ceiling if draw is None else draw() * ceiling

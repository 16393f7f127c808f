"""PassGuard: a pass that meets an unexpected error (a bug) fails closed and is tried again.

The error is logged once per streak at ERROR with its traceback, and every failed pass is
counted. The loop keeps running and keeps its Lease (it renews between retries). A pass plans
before it writes, so one that fails before its writes writes nothing; and while a streak
lasts, the retries hold every start (nodes already updating still step), so a bug met after
the writes cannot start more nodes pass after pass. Retries back off, from the tick interval
doubling up to `cap_seconds`. Once a retry holding starts succeeds, one pass with starts
allowed follows at once: the streak ends when it succeeds too, and goes on (without a second
ERROR line) when it fails.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from brupop.domain.retry_backoff import Backoff
from brupop.ports.clock import Clock

RETRY_CAP_SECONDS = 30.0


class PassGuard:
    """The streak of failed passes of one controller loop, and when to try again."""

    def __init__(
        self,
        clock: Clock,
        log: structlog.typing.FilteringBoundLogger,
        count_failure: Callable[[], None],
        *,
        base_seconds: float,
        cap_seconds: float = RETRY_CAP_SECONDS,
    ) -> None:
        self._clock, self._log, self._count = clock, log, count_failure
        self._backoff = Backoff(max(base_seconds, 0.01), max(cap_seconds, base_seconds))
        self._failures = 0  # failed passes in the current streak
        self._probing = False  # the next pass allows starts again, to end the streak
        self._retry_at = 0.0

    @property
    def failing(self) -> bool:
        """A streak of failed passes is going on."""
        return self._failures > 0

    @property
    def holding_starts(self) -> bool:
        """The next pass must start nobody."""
        return self.failing and not self._probing

    def seconds_until_due(self) -> float:
        """How long until the next pass may run (0: now)."""
        return max(0.0, self._retry_at - self._clock.monotonic())

    def due(self) -> bool:
        """The next pass may run now."""
        return self.seconds_until_due() <= 0

    def failed(self, error: Exception) -> None:
        """A pass raised `error`: count it, log it if it opens a streak, and back off."""
        self._count()
        self._failures += 1
        self._probing = False
        delay = self._backoff.delay(self._failures)
        self._retry_at = self._clock.monotonic() + delay
        if self._failures == 1:
            self._log.error(
                "controller.pass_failed",
                error=type(error).__name__,
                reason=str(error)[:300],
                retry_in_seconds=round(delay, 3),
                exc_info=error,
            )
        else:
            self._log.debug(
                "controller.pass_failed_again",
                error=type(error).__name__,
                failures=self._failures,
                retry_in_seconds=round(delay, 3),
            )

    def succeeded(self) -> None:
        """A pass completed: a retry holding starts is followed by one that allows them, and
        the streak ends when that one completes too."""
        if not self.failing:
            return
        if not self._probing:
            self._probing = True
            self._retry_at = 0.0
            return
        self._log.info("controller.pass_recovered", failures=self._failures)
        self._failures, self._probing = 0, False

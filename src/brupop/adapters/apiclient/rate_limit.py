"""The original's update-API rate limit: a burst of calls, then one per period (token bucket)."""

from __future__ import annotations

from brupop.adapters.system import event_lines
from brupop.ports.clock import Clock

log = event_lines.get_logger(__name__)


class RateLimiter:
    """Allows `burst` calls at once, refilled at one per `period_seconds`, timed by the Clock."""

    def __init__(self, clock: Clock, period_seconds: float, burst: int) -> None:
        self._clock = clock
        self._period = period_seconds
        self._burst = max(1, burst)
        self._tokens = float(self._burst)
        self._updated = clock.monotonic()

    def acquire(self) -> None:
        """Take one call's worth of quota, sleeping (on the Clock) until there is one."""
        if self._period <= 0:
            return
        self._refill()
        if self._tokens < 1:
            wait = (1 - self._tokens) * self._period
            log.debug("apiclient.rate_limited", wait_seconds=round(wait, 3))
            self._clock.sleep(wait)
            self._refill()
        self._tokens = max(0.0, self._tokens - 1)

    def _refill(self) -> None:
        now = self._clock.monotonic()
        elapsed = max(0.0, now - self._updated)
        self._tokens = min(float(self._burst), self._tokens + elapsed / self._period)
        self._updated = now

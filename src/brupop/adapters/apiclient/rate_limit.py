"""The original's update-API rate limit: a burst of calls, then one per period (token bucket)."""

from __future__ import annotations

from brupop.adapters.system import event_lines
from brupop.domain.token_bucket import TokenBucket

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from brupop.ports.clock import Clock

log = event_lines.get_logger(__name__)


class RateLimiter:
    """Allows `burst` calls at once, refilled at one per `period_seconds`, timed by the Clock."""

    def __init__(self, clock: Clock, period_seconds: float, burst: int) -> None:
        self._clock = clock
        self._bucket = TokenBucket.full(period_seconds, burst, clock.monotonic())

    def acquire(self) -> None:
        """Take one call's worth of quota, sleeping (on the Clock) until there is one."""
        if self._bucket.period <= 0:
            return
        now = self._clock.monotonic()
        wait = self._bucket.wait(now)
        if wait > 0:
            log.debug("apiclient.rate_limited", wait_seconds=round(wait, 3))
            self._clock.sleep(wait)
            now = self._clock.monotonic()
        taken = self._bucket.take(now)
        # One sleep is all a call waits: a clock that moved less still lets it through, empty.
        self._bucket = taken or TokenBucket(self._bucket.period, self._bucket.burst, 0.0, now)

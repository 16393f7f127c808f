"""TokenBucket: a burst of takes, then one per period; a value, so its owner keeps the time.

The host's update API (the original's rate limit) and an agent's status writes at the apiserver
are both paced this way; the owner passes monotonic seconds in and keeps the bucket returned.
"""

from __future__ import annotations

from brupop.domain.value_objects import value_object


@value_object
class TokenBucket:
    """`tokens` left of `burst` at monotonic second `at`, refilled at one per `period`."""

    period: float
    burst: int
    tokens: float
    at: float

    @classmethod
    def full(cls, period: float, burst: int, at: float) -> TokenBucket:
        """A bucket holding its whole burst at `at` (a burst below 1 counts as 1)."""
        size = max(1, burst)
        return cls(period, size, float(size), at)

    def refilled(self, now: float) -> TokenBucket:
        """The bucket at `now` (time never runs back: an earlier `now` refills nothing)."""
        if self.period <= 0:
            return TokenBucket(self.period, self.burst, float(self.burst), now)
        gained = max(0.0, now - self.at) / self.period
        return TokenBucket(
            self.period, self.burst, min(float(self.burst), self.tokens + gained), now
        )

    def wait(self, now: float) -> float:
        """Seconds from `now` until one take is allowed (0 when it is now)."""
        tokens = self.refilled(now).tokens
        return 0.0 if tokens >= 1 else (1 - tokens) * self.period

    def take(self, now: float) -> TokenBucket | None:
        """The bucket after one take at `now`; None when none is allowed yet."""
        bucket = self.refilled(now)
        if bucket.tokens < 1:
            return None
        return TokenBucket(self.period, self.burst, bucket.tokens - 1, now)

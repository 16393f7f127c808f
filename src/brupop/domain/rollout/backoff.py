"""Backoff after failures: a node that failed waits longer than 2^crash_count minutes (at most
24 hours) before it may start again, as in the original, without overflow for any count."""

from __future__ import annotations

from datetime import datetime, timedelta

from brupop.domain.retry_backoff import Backoff
from brupop.domain.shadow import ShadowStatus
from brupop.domain.timestamps import later

MAX_DELAY_MINUTES = 24 * 60
_BACKOFF = Backoff(first_seconds=60.0, cap_seconds=MAX_DELAY_MINUTES * 60.0)


def delay_minutes(crash_count: int) -> int:
    """min(2^crash_count, 1440): the one Backoff's wait after crash_count + 1 failures, from a
    minute; it never builds a huge power."""
    if crash_count < 0:
        raise ValueError("crash_count cannot be negative")
    return int(_BACKOFF.ceiling(crash_count + 1)) // 60


def retry_allowed_at(status: ShadowStatus) -> datetime | None:
    """The first moment the node may start again; None when it never failed.

    The original allows a retry once the *whole* minutes elapsed since the failure exceed the
    delay, i.e. after delay + 1 minutes.
    """
    failed_at = status.state_transition_failure_timestamp
    if failed_at is None:
        return None
    return later(failed_at, timedelta(minutes=delay_minutes(status.crash_count) + 1))


def is_retry_allowed(status: ShadowStatus, now: datetime) -> bool:
    """The node is not backing off at `now`."""
    allowed_at = retry_allowed_at(status)
    return allowed_at is None or now >= allowed_at

"""The update-API rate limit: a burst, then one call per period, waited on the Clock."""

from __future__ import annotations

import pytest

from brupop.adapters.apiclient.rate_limit import RateLimiter
from tests.fakes.clock import FakeClock


def test_a_burst_passes_at_once_then_each_call_waits_for_the_period() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, period_seconds=10, burst=2)

    for _ in range(4):
        limiter.acquire()

    assert clock.sleeps == [pytest.approx(10), pytest.approx(10)]


def test_quota_refills_while_idle_up_to_the_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, period_seconds=10, burst=2)
    limiter.acquire()
    limiter.acquire()

    clock.advance(100)
    limiter.acquire()
    limiter.acquire()
    assert clock.sleeps == []
    limiter.acquire()
    assert clock.sleeps == [pytest.approx(10)]


def test_a_partly_refilled_quota_waits_only_the_rest() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, period_seconds=10, burst=1)
    limiter.acquire()

    clock.advance(4)
    limiter.acquire()

    assert clock.sleeps == [pytest.approx(6)]


def test_a_zero_period_disables_the_limit() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, period_seconds=0, burst=1)

    for _ in range(10):
        limiter.acquire()

    assert clock.sleeps == []

"""PassGuard: one ERROR per streak, retries that back off and hold every start, and a streak
that ends only when a pass that allows starts succeeds."""

from __future__ import annotations

import structlog
from structlog.testing import capture_logs

from brupop.services.controller.runtime.pass_guard import PassGuard
from tests.fakes.clock import FakeClock


class _Count:
    def __init__(self) -> None:
        self.failures = 0

    def __call__(self) -> None:
        self.failures += 1


def _guard(clock: FakeClock, count: _Count) -> PassGuard:
    return PassGuard(clock, structlog.get_logger(), count, base_seconds=2.0, cap_seconds=30.0)


def test_a_streak_is_logged_once_counted_every_time_and_backs_off_up_to_the_cap() -> None:
    clock, count = FakeClock(), _Count()
    with capture_logs() as logs:
        guard = _guard(clock, count)
        delays = []
        for _ in range(6):
            guard.failed(RuntimeError("bug"))
            delays.append(guard.seconds_until_due())
            assert not guard.due()

    assert delays == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert count.failures == 6
    assert [line["log_level"] for line in logs].count("error") == 1


def test_retries_hold_starts_until_a_pass_that_allows_them_succeeds() -> None:
    clock, count = FakeClock(), _Count()
    with capture_logs() as logs:
        guard = _guard(clock, count)
        assert not guard.holding_starts
        guard.failed(RuntimeError("bug"))
        assert guard.holding_starts
        guard.succeeded()  # a retry that held starts
        assert guard.due() and not guard.holding_starts and guard.failing
        guard.failed(RuntimeError("bug"))  # the bug is in starting: same streak
        assert guard.holding_starts
        guard.succeeded()
        guard.succeeded()  # held, then allowing starts: over

    assert not guard.failing and not guard.holding_starts and guard.due()
    assert [line["event"] for line in logs] == [
        "controller.pass_failed",
        "controller.pass_failed_again",
        "controller.pass_recovered",
    ]

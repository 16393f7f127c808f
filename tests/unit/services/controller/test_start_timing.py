"""StartTiming on its own: which window applies, which durations count, and how long a hold
is reused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.domain.policy.effective_policy import ENVIRONMENT_POLICY, EffectivePolicy, PolicySource
from brupop.domain.policy.scheduling_policy import Blackout, SchedulingPolicy, UpdateWindow
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.reason import Reason
from brupop.domain.starting.start_schedule import StartSchedule, StartVerdict, start_verdict
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.services.controller.starts.start_timing import StartTiming

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
FREEZE = Blackout(start=NOW, end=NOW + timedelta(days=1), reason="freeze")


def _policy(**scheduling: object) -> EffectivePolicy:
    return EffectivePolicy(
        source=PolicySource.POLICY,
        scheduling=SchedulingPolicy(**scheduling),  # type: ignore[arg-type]
    )


def _window(expression: str) -> MaintenanceWindow:
    return MaintenanceWindow.starting(expression, now=NOW)


def test_without_a_policy_object_only_the_environment_gate_counts() -> None:
    timing = StartTiming()
    gate = timing.gate(ENVIRONMENT_POLICY, _window("* * 10 * * * *"), window_open=True, now=NOW)
    assert gate.may_start and gate.hold is None


def test_policy_windows_open_a_start_the_environment_gate_would_not() -> None:
    timing = StartTiming()
    policy = _policy(windows=(UpdateWindow(cron="* * 19 * * * *", time_zone="Asia/Tokyo"),))
    gate = timing.gate(policy, _window("* * 2 * * * *"), window_open=False, now=NOW)
    assert gate.may_start  # 19:00 in Tokyo


def test_finish_by_uses_the_environment_window_when_the_policy_lists_none() -> None:
    timing = StartTiming()
    gate = timing.gate(
        _policy(finish_by=True),
        _window("* * 10 * * * *"),
        window_open=True,
        now=NOW + timedelta(minutes=50),
    )
    assert gate.hold is not None and gate.hold.reason is Reason.FINISH_BY
    assert gate.window_open


def test_a_one_shot_environment_window_has_no_end_to_finish_by_but_blackouts_apply() -> None:
    timing = StartTiming()
    one_shot = _window("0 0 10 * * * *")
    assert timing.gate(_policy(finish_by=True), one_shot, window_open=True, now=NOW).may_start
    held = timing.gate(_policy(blackouts=(FREEZE,)), one_shot, window_open=True, now=NOW)
    assert held.hold is not None and held.hold.reason is Reason.BLACKOUT


def test_a_hold_is_reused_but_never_past_its_next_start() -> None:
    timing = StartTiming()
    policy = _policy(blackouts=(FREEZE,))
    window = _window("* * * * * * *")
    assert not timing.gate(policy, window, window_open=True, now=NOW).may_start
    last = FREEZE.end - timedelta(seconds=1)
    assert not timing.gate(policy, window, window_open=True, now=last).may_start
    assert timing.gate(policy, window, window_open=True, now=FREEZE.end).may_start


def _seen(timing: StartTiming) -> list[int]:
    return list(timing.history.seconds)


def test_durations_come_from_the_status_and_the_leaders_measurements() -> None:
    timing = StartTiming()
    timing.follow_status(UpdatePolicyStatus(update_durations=(600, 700)))
    timing.measured([800.4], leading=False)  # a follower: the leader's status will tell
    assert _seen(timing) == [600, 700]
    timing.measured([800.4], leading=True)
    assert _seen(timing) == [600, 700, 800]
    # A status another leader wrote meanwhile does not drop the one not yet written.
    timing.follow_status(UpdatePolicyStatus(update_durations=(600, 700, 650)))
    assert _seen(timing) == [600, 700, 650, 800]
    timing.written(UpdatePolicyStatus(update_durations=(600, 700, 650, 800)))
    timing.follow_status(UpdatePolicyStatus(update_durations=(600, 700, 650, 800)))
    assert _seen(timing) == [600, 700, 650, 800]
    assert timing.history.expected_seconds == 800


class _CountedSearch:
    """start_verdict, counting how often the windows are searched."""

    def __init__(self) -> None:
        self.searches = 0

    def __call__(
        self, schedule: StartSchedule, now: datetime, expected_seconds: int, *, steady: timedelta
    ) -> StartVerdict:
        self.searches += 1
        return start_verdict(schedule, now, expected_seconds, steady=steady)


def _alternating_minutes(count: int) -> tuple[UpdateWindow, ...]:
    """`count` windows that are open on alternate minutes: together, always open."""
    return tuple(
        UpdateWindow(cron=f"* {'0-59/2' if i % 2 == 0 else '1-59/2'} * * * * *", time_zone="UTC")
        for i in range(count)
    )


def test_an_allowed_start_is_not_searched_again_on_every_pass() -> None:
    search = _CountedSearch()
    timing = StartTiming(search=search)
    policy = _policy(windows=_alternating_minutes(4))
    passes = [NOW + timedelta(seconds=2 * i) for i in range(90)]  # three minutes, a pass per 2 s
    gates = [timing.gate(policy, _window("* * * * * * *"), window_open=True, now=t) for t in passes]
    assert all(gate.may_start for gate in gates)
    assert search.searches <= 4  # once per minute reused, not 90 times

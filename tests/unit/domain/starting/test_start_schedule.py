"""When the fleet may start a node: several windows across zones, daylight saving, blackouts,
finish-by with a learned duration, and the REASON sentence of each hold."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.reason import Reason
from brupop.domain.starting.start_schedule import StartSchedule, start_verdict
from brupop.domain.starting.update_durations import UpdateDurations
from brupop.domain.windows.zoned_window import parse_window

MIN = 60


@dataclass(frozen=True)
class Freeze:
    start: datetime
    end: datetime
    reason: str


def _utc(month: int, day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


TOKYO_NIGHT = parse_window("* * 2-3 * * * *", "Asia/Tokyo")  # 17:00-18:59 UTC
NEW_YORK_NIGHT = parse_window("* * 2-3 * * * *", "America/New_York")  # 07:00-08:59 UTC in Jan
HOLIDAY = Freeze(_utc(12, 24, 0), _utc(12, 27, 0), "holiday freeze")


def test_no_windows_and_no_blackouts_never_hold() -> None:
    verdict = start_verdict(StartSchedule(), _utc(1, 5, 12), 900)
    assert verdict.may_start
    assert verdict.next_start == _utc(1, 5, 12)


def test_several_windows_across_zones_are_open_when_any_is() -> None:
    schedule = StartSchedule(windows=(TOKYO_NIGHT, NEW_YORK_NIGHT), finish_by=False)
    assert start_verdict(schedule, _utc(1, 5, 7, 30), 900).may_start
    assert start_verdict(schedule, _utc(1, 5, 17, 30), 900).may_start
    closed = start_verdict(schedule, _utc(1, 5, 12), 900)
    assert closed.hold is not None
    assert closed.hold.reason is Reason.OUTSIDE_WINDOW
    assert closed.next_start == _utc(1, 5, 17)
    assert closed.hold.detail == "outside the update windows; next start at 2026-01-05T17:00:00Z"


def test_adjacent_windows_in_different_zones_merge_into_one_stretch_for_finish_by() -> None:
    two = parse_window("* * 2 * * * *", "UTC")
    three = parse_window("* * 3 * * * *", "Europe/London")  # UTC+0 in January
    schedule = StartSchedule(windows=(two, three))
    assert start_verdict(schedule, _utc(1, 5, 2, 50), 22 * MIN).may_start
    late = start_verdict(schedule, _utc(1, 5, 3, 40), 22 * MIN)
    assert late.hold is not None
    assert late.hold.reason is Reason.FINISH_BY
    assert late.hold.detail == (
        "would not finish before the window closes at 04:00 UTC (expected 22 min); "
        "next start at 2026-01-06T02:00:00Z"
    )


def test_spring_forward_a_window_in_the_skipped_hour_waits_for_the_next_day() -> None:
    # New York jumps from 02:00 to 03:00 on 2026-03-08: 02:30 does not exist that day.
    schedule = StartSchedule(windows=(parse_window("* 30-59 2 * * * *", "America/New_York"),))
    verdict = start_verdict(schedule, _utc(3, 8, 5), 10 * MIN)
    assert verdict.hold is not None
    assert verdict.hold.reason is Reason.OUTSIDE_WINDOW
    assert verdict.next_start == _utc(3, 9, 6, 30)  # 02:30 EDT on the 9th


def test_fall_back_a_window_in_the_repeated_hour_lasts_two_hours_for_finish_by() -> None:
    # New York falls back from 02:00 EDT to 01:00 EST on 2026-11-01.
    schedule = StartSchedule(windows=(parse_window("* * 1 * * * *", "America/New_York"),))
    assert start_verdict(schedule, _utc(11, 1, 5), 90 * MIN).may_start  # 01:00 EDT
    ordinary = start_verdict(schedule, _utc(11, 2, 6), 90 * MIN)  # 01:00 EST, a one-hour night
    assert ordinary.hold is not None
    assert ordinary.hold.reason is Reason.FINISH_BY
    assert ordinary.next_start is None  # no later night is long enough either


def test_inside_a_blackout_the_reason_names_it_and_its_end() -> None:
    verdict = start_verdict(StartSchedule(blackouts=(HOLIDAY,)), _utc(12, 25, 10), 900)
    assert verdict.hold is not None
    assert verdict.hold.reason is Reason.BLACKOUT
    assert verdict.hold.detail == "blackout until 2026-12-27T00:00:00Z: holiday freeze"
    assert verdict.next_start == _utc(12, 27, 0)


def test_a_blackout_starting_mid_rollout_stops_starts_from_its_start() -> None:
    schedule = StartSchedule(blackouts=(HOLIDAY,), finish_by=False)
    assert start_verdict(schedule, _utc(12, 23, 23, 59), 900).may_start
    at_start = start_verdict(schedule, _utc(12, 24, 0), 900)
    assert at_start.hold is not None
    assert at_start.hold.reason is Reason.BLACKOUT
    assert start_verdict(schedule, _utc(12, 27, 0), 900).may_start


def test_finish_by_keeps_an_update_from_reaching_into_a_blackout() -> None:
    schedule = StartSchedule(blackouts=(HOLIDAY,))
    assert start_verdict(schedule, _utc(12, 23, 23, 38), 22 * MIN).may_start
    verdict = start_verdict(schedule, _utc(12, 23, 23, 50), 22 * MIN)
    assert verdict.hold is not None
    assert verdict.hold.reason is Reason.FINISH_BY
    assert verdict.hold.detail == (
        "would not finish before the blackout from 2026-12-24T00:00:00Z: holiday freeze "
        "(expected 22 min); next start at 2026-12-27T00:00:00Z"
    )


def test_after_a_blackout_the_next_start_waits_for_a_window() -> None:
    window = parse_window("* * 2-3 * * * *", "UTC")
    schedule = StartSchedule(windows=(window,), blackouts=(HOLIDAY,))
    verdict = start_verdict(schedule, _utc(12, 25, 2), 900)
    assert verdict.hold is not None
    assert verdict.hold.reason is Reason.BLACKOUT
    assert verdict.next_start == _utc(12, 27, 2)
    assert verdict.hold.detail == (
        "blackout until 2026-12-27T00:00:00Z: holiday freeze; next start at 2026-12-27T02:00:00Z"
    )


def test_overlapping_blackouts_hold_until_the_last_one_ends() -> None:
    longer = Freeze(_utc(12, 26, 0), _utc(12, 31, 0), "year-end close")
    verdict = start_verdict(StartSchedule(blackouts=(HOLIDAY, longer)), _utc(12, 26, 12), 900)
    assert verdict.hold is not None
    assert verdict.hold.detail == "blackout until 2026-12-31T00:00:00Z: year-end close"
    assert verdict.next_start == _utc(12, 31, 0)


def test_finish_by_with_a_learned_duration_holds_a_start_near_the_window_end() -> None:
    history = UpdateDurations.of([300] * 10 + [22 * MIN] * 8 + [5000] * 2)
    assert history.expected_seconds == 22 * MIN  # the 18th of 20, nearest rank
    schedule = StartSchedule(windows=(parse_window("* * 2-3 * * * *", "UTC"),))
    assert start_verdict(schedule, _utc(1, 5, 3, 38), history.expected_seconds).may_start
    near_end = start_verdict(schedule, _utc(1, 5, 3, 39), history.expected_seconds)
    assert near_end.hold is not None
    assert near_end.hold.reason is Reason.FINISH_BY
    assert "expected 22 min" in near_end.hold.detail
    # Before any history the guess of 15 minutes lets the same start go ahead.
    assert start_verdict(schedule, _utc(1, 5, 3, 39), UpdateDurations().expected_seconds).may_start


def test_without_finish_by_a_node_starts_until_the_last_open_second() -> None:
    schedule = StartSchedule(windows=(parse_window("* * 2-3 * * * *", "UTC"),), finish_by=False)
    last = _utc(1, 5, 3, 59) + timedelta(seconds=59)
    assert start_verdict(schedule, last, 3600).may_start
    assert not start_verdict(schedule, last + timedelta(seconds=1), 3600).may_start


def test_a_window_never_long_enough_says_no_start_is_possible() -> None:
    schedule = StartSchedule(windows=(parse_window("* * 2 * * Mon *", "Europe/Paris"),))
    verdict = start_verdict(schedule, _utc(1, 5, 0), 2 * 3600)
    assert verdict.hold is not None
    assert verdict.next_start is None
    assert verdict.hold.detail.endswith("no start possible within 366 days")


_CRONS = ("* * 1 * * * *", "* 30-59 2 * * * *", "* * 1-3 * * * *", "* * 22-23 * * * *")
_ZONES = ("UTC", "America/New_York", "Europe/Paris", "Asia/Tokyo")


@settings(max_examples=40, deadline=None)
@given(
    windows=st.lists(st.tuples(st.sampled_from(_CRONS), st.sampled_from(_ZONES)), max_size=2),
    freeze_hours=st.one_of(st.none(), st.tuples(st.integers(0, 72), st.integers(1, 48))),
    expected=st.integers(0, 3 * 3600),
    offset_hours=st.integers(0, 48),
    finish_by=st.booleans(),
)
def test_the_next_start_is_allowed_and_every_moment_before_it_is_held(
    windows: list[tuple[str, str]],
    freeze_hours: tuple[int, int] | None,
    expected: int,
    offset_hours: int,
    finish_by: bool,
) -> None:
    now = _utc(10, 24, 0) + timedelta(hours=offset_hours)  # Paris falls back on the 25th
    blackouts: tuple[Freeze, ...] = ()
    if freeze_hours is not None:
        start = _utc(10, 24, 0) + timedelta(hours=freeze_hours[0])
        blackouts = (Freeze(start, start + timedelta(hours=freeze_hours[1]), "freeze"),)
    schedule = StartSchedule(
        windows=tuple(parse_window(c, z) for c, z in windows),
        blackouts=blackouts,
        finish_by=finish_by,
    )
    verdict = start_verdict(schedule, now, expected)
    if verdict.may_start:
        assert verdict.next_start == now
        return
    assert verdict.hold is not None and verdict.hold.detail
    following = verdict.next_start
    if following is None:
        return
    assert start_verdict(schedule, following, expected).may_start
    span = following - now
    for step in range(1, 20):
        assert not start_verdict(schedule, now + span * step / 20, expected).may_start


@settings(max_examples=40, deadline=None)
@given(
    windows=st.lists(st.tuples(st.sampled_from(_CRONS), st.sampled_from(_ZONES)), max_size=2),
    freeze_hours=st.one_of(st.none(), st.tuples(st.integers(0, 72), st.integers(1, 48))),
    expected=st.integers(0, 3 * 3600),
    offset_minutes=st.integers(0, 48 * 60),
    steady_minutes=st.integers(0, 90),
    finish_by=st.booleans(),
)
def test_every_moment_before_allowed_until_allows_a_start_and_it_stays_within_steady(
    windows: list[tuple[str, str]],
    freeze_hours: tuple[int, int] | None,
    expected: int,
    offset_minutes: int,
    steady_minutes: int,
    finish_by: bool,
) -> None:
    now = _utc(10, 24, 0) + timedelta(minutes=offset_minutes)
    blackouts: tuple[Freeze, ...] = ()
    if freeze_hours is not None:
        start = _utc(10, 24, 0) + timedelta(hours=freeze_hours[0])
        blackouts = (Freeze(start, start + timedelta(hours=freeze_hours[1]), "freeze"),)
    schedule = StartSchedule(
        windows=tuple(parse_window(c, z) for c, z in windows),
        blackouts=blackouts,
        finish_by=finish_by,
    )
    steady = timedelta(minutes=steady_minutes)
    verdict = start_verdict(schedule, now, expected, steady=steady)
    if not verdict.may_start:
        assert verdict.allowed_until is None
        return
    until = verdict.allowed_until
    assert until is not None and now <= until <= now + steady
    for step in range(20):
        moment = now + (until - now) * step / 20
        assert start_verdict(schedule, moment, expected).may_start, moment


def test_a_start_stays_allowed_until_finish_by_would_reach_past_the_window() -> None:
    window = parse_window("* * 2-3 * * * *", "UTC")  # open 02:00-03:59
    verdict = start_verdict(
        StartSchedule(windows=(window,)), _utc(1, 5, 2), 90 * MIN, steady=timedelta(hours=1)
    )
    assert verdict.allowed_until == _utc(1, 5, 2, 30)


def test_a_start_stays_allowed_until_an_update_would_reach_into_a_blackout() -> None:
    schedule = StartSchedule(blackouts=(HOLIDAY,))
    now = HOLIDAY.start - timedelta(hours=1)
    verdict = start_verdict(schedule, now, 20 * MIN, steady=timedelta(hours=2))
    assert verdict.allowed_until == HOLIDAY.start - timedelta(minutes=20)


def test_without_a_steady_span_a_start_is_allowed_only_for_the_moment_asked() -> None:
    verdict = start_verdict(StartSchedule(), _utc(1, 5, 12), 900)
    assert verdict.allowed_until == _utc(1, 5, 12)

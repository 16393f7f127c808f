"""One update window in its time zone: open seconds, next opening, closing, daylight saving."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.windows.cron_schedule import CronSchedule
from brupop.domain.windows.zoned_window import WindowError, ZonedWindow, parse_window

WEEK = timedelta(days=7)


def _utc(month: int, day: int, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, second, tzinfo=UTC)


def test_a_window_is_read_on_the_wall_clock_of_its_zone() -> None:
    tokyo = parse_window("* * 2-3 * * * *", "Asia/Tokyo")  # UTC+9: 17:00-18:59 UTC
    assert not tokyo.is_open(_utc(1, 5, 2))
    assert tokyo.is_open(_utc(1, 5, 17))
    assert tokyo.is_open(_utc(1, 5, 18, 59, 59))
    assert not tokyo.is_open(_utc(1, 5, 19))
    assert tokyo.next_open(_utc(1, 5, 3), _utc(1, 5, 3) + WEEK) == _utc(1, 5, 17)
    assert tokyo.first_closed(_utc(1, 5, 17, 30), _utc(1, 6, 0)) == _utc(1, 5, 19)


def test_closing_is_none_when_the_window_outlasts_the_limit() -> None:
    window = parse_window("* * 2-3 * * * *", "UTC")
    assert window.first_closed(_utc(1, 5, 2), _utc(1, 5, 3, 59, 59)) is None
    assert window.first_closed(_utc(1, 5, 2), _utc(1, 5, 4, 0, 1)) == _utc(1, 5, 4)


def test_an_always_open_window_closes_never_within_days() -> None:
    window = parse_window("* * * * * * *", "Europe/Paris")
    assert window.first_closed(_utc(1, 1, 0), _utc(12, 31, 0)) is None


def test_next_open_is_the_moment_itself_when_already_open() -> None:
    window = parse_window("* * 2-3 * * * *", "UTC")
    moment = _utc(1, 5, 2, 10)
    assert window.next_open(moment, moment + WEEK) == moment


def test_next_open_is_none_beyond_the_limit() -> None:
    window = parse_window("* * 2 * * * *", "UTC")
    assert window.next_open(_utc(1, 5, 3), _utc(1, 6, 1)) is None


def test_spring_forward_a_window_in_the_skipped_hour_does_not_open_that_day() -> None:
    # New York jumps from 02:00 EST (07:00 UTC) to 03:00 EDT on 2026-03-08.
    window = parse_window("* 30-59 2 * * * *", "America/New_York")
    day_before = window.next_open(_utc(3, 7, 0), _utc(3, 20, 0))
    assert day_before == _utc(3, 7, 7, 30)  # 02:30 EST
    skipped = window.next_open(_utc(3, 7, 8), _utc(3, 20, 0))
    assert skipped == _utc(3, 9, 6, 30)  # 02:30 EDT the next day, not on the 8th
    assert not any(window.is_open(_utc(3, 8, 6) + timedelta(minutes=m)) for m in range(0, 180))


def test_spring_forward_a_window_straddling_the_skipped_hour_keeps_its_remaining_part() -> None:
    window = parse_window("* * 1-3 * * * *", "America/New_York")  # 01:00-03:59 local
    opened = window.next_open(_utc(3, 8, 0), _utc(3, 9, 0))
    assert opened == _utc(3, 8, 6)  # 01:00 EST
    # 01:00-01:59 EST then, after the jump, 03:00-03:59 EDT: two real hours in one stretch.
    assert window.first_closed(opened, _utc(3, 9, 0)) == _utc(3, 8, 8)


def test_fall_back_a_window_in_the_repeated_hour_is_open_both_times() -> None:
    # New York falls back from 02:00 EDT (06:00 UTC) to 01:00 EST on 2026-11-01.
    window = parse_window("* * 1 * * * *", "America/New_York")  # 01:00-01:59 local
    assert window.is_open(_utc(11, 1, 5, 30))  # 01:30 EDT
    assert window.is_open(_utc(11, 1, 6, 30))  # 01:30 EST
    assert window.first_closed(_utc(11, 1, 5), _utc(11, 2, 0)) == _utc(11, 1, 7)
    # An ordinary day: one hour.
    assert window.first_closed(_utc(11, 2, 6), _utc(11, 3, 0)) == _utc(11, 2, 7)


def test_fall_back_the_repeated_part_opens_again_after_a_closed_stretch() -> None:
    window = parse_window("* 10-20 1 * * * *", "America/New_York")  # 01:10-01:20 local
    assert window.first_closed(_utc(11, 1, 5, 10), _utc(11, 2, 0)) == _utc(11, 1, 5, 21)
    # From 01:30 EDT, the next opening is 01:10 EST the same night (not the next day).
    assert window.next_open(_utc(11, 1, 5, 30), _utc(11, 3, 0)) == _utc(11, 1, 6, 10)


@pytest.mark.parametrize(
    ("cron", "zone", "complaint"),
    [
        ("* * 2-3 * * * *", "Mars/Olympus_Mons", "'Mars/Olympus_Mons' is not an IANA time zone"),
        ("* * 2-3 * * * *", "", "1 to 64 characters"),
        ("* * 2-3 * * * *", "../etc/passwd", "is not an IANA time zone"),
        ("* * 25 * * * *", "UTC", "hours: 25 is outside 0-23"),
        ("* * *", "UTC", "3 fields"),
    ],
)
def test_bad_windows_are_refused_with_a_short_reason(cron: str, zone: str, complaint: str) -> None:
    with pytest.raises(WindowError, match=complaint) as raised:
        parse_window(cron, zone)
    assert len(str(raised.value)) < 300


def test_first_miss_jumps_over_matching_hours_and_days() -> None:
    schedule = CronSchedule.parse("* * * * * Mon-Fri *")
    start = datetime(2026, 1, 5, 10, 0, 0)  # a Monday, wall clock
    assert schedule.first_miss(start, datetime(2026, 2, 1)) == datetime(2026, 1, 10)
    assert schedule.first_miss(start, datetime(2026, 1, 9)) is None


def test_a_utc_window_has_no_offset_changes() -> None:
    window = ZonedWindow(CronSchedule.parse("* * 2 * * * *"), UTC)
    assert window.next_open(_utc(1, 1, 3), _utc(12, 31, 0)) == _utc(1, 2, 2)


_CRONS = (
    "* * 1 * * * *",
    "* 30-59 2 * * * *",
    "* * 1-3 * * * *",
    "* 10-20 1 * * * *",
    "0-29 * 2 * * * *",
)
_ZONES = ("UTC", "America/New_York", "Europe/Paris", "Australia/Lord_Howe", "Asia/Tokyo")
# Moments a few hours before the 2026 daylight saving changes of those zones (both ways).
_NEAR_CHANGES = (
    _utc(3, 8, 4),
    _utc(11, 1, 3),
    _utc(3, 29, 0),
    _utc(10, 25, 0),
    _utc(4, 4, 13),
    _utc(10, 3, 14),
)


@settings(max_examples=60, deadline=None)
@given(
    cron=st.sampled_from(_CRONS),
    zone=st.sampled_from(_ZONES),
    base=st.sampled_from(_NEAR_CHANGES),
    offset=st.integers(min_value=0, max_value=4 * 3600),
)
def test_openings_and_closings_agree_with_a_second_by_second_scan(
    cron: str, zone: str, base: datetime, offset: int
) -> None:
    window = parse_window(cron, zone)
    start = base + timedelta(seconds=offset)
    limit = start + timedelta(hours=4)
    seconds = [start + timedelta(seconds=s) for s in range(int((limit - start).total_seconds()))]
    opened = next((m for m in seconds if window.is_open(m)), None)
    assert window.next_open(start, limit) == opened
    if window.is_open(start):
        closed = next((m for m in seconds if not window.is_open(m)), None)
        assert window.first_closed(start, limit) == closed

"""The 7-field cron format of the original (Rust `cron` crate 0.12), example by example.

Expected fire times come from the crate's own tests and from the original scheduler's tests.
"""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.windows.cron_schedule import CronError, CronSchedule
from tests.support.outside_input import outside_text

_FIELD_TEXT = st.text(alphabet=st.sampled_from("0123456789²\u0661*/,-?LW#JanMonsun"), max_size=8)
_FIELDS_OF_TEXT = st.lists(_FIELD_TEXT, min_size=6, max_size=7).map(" ".join)


def _at(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def _upcoming(expression: str, after: datetime, count: int) -> list[datetime]:
    schedule, times, moment = CronSchedule.parse(expression), [], after
    for _ in range(count):
        found = schedule.next_after(moment)
        assert found is not None
        times.append(found)
        moment = found
    return times


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (
            "*/17 * * * * ?",
            [
                _at(2020, 1, 1, 0, 0, 17),
                _at(2020, 1, 1, 0, 0, 34),
                _at(2020, 1, 1, 0, 0, 51),
                _at(2020, 1, 1, 0, 1, 0),
                _at(2020, 1, 1, 0, 1, 17),
            ],
        ),
        (
            "0 0 0 1 1-4/2 ?",
            [_at(2020, 3, 1), _at(2021, 1, 1), _at(2021, 3, 1), _at(2022, 1, 1)],
        ),
        (
            "0 0 10-12/2 * * ?",
            [_at(2020, 1, 1, 10), _at(2020, 1, 1, 12), _at(2020, 1, 2, 10), _at(2020, 1, 2, 12)],
        ),
        (
            "0 0 0 1-31/10 * ?",
            [_at(2020, 1, 11), _at(2020, 1, 21), _at(2020, 1, 31), _at(2020, 2, 1)],
        ),
        (
            "0 0 0 1 January-June/1 *",
            [_at(2020, m, 1) for m in range(2, 7)] + [_at(2021, 1, 1)],
        ),
        ("0 0 0 1 1 ? 2020-2040/10", [_at(2030, 1, 1), _at(2040, 1, 1)]),
        (
            "0 */21 * * * ?",
            [_at(2020, 1, 1, 0, 21), _at(2020, 1, 1, 0, 42), _at(2020, 1, 1, 1, 0)],
        ),
        (
            "0 0 0 1 January-April/2 ?",
            [_at(2020, 3, 1), _at(2021, 1, 1), _at(2021, 3, 1), _at(2022, 1, 1)],
        ),
        ("@yearly", [_at(2021, 1, 1), _at(2022, 1, 1)]),
        ("@monthly", [_at(2020, 2, 1), _at(2020, 3, 1)]),
        ("@weekly", [_at(2020, 1, 5), _at(2020, 1, 12)]),  # Sundays
        ("@daily", [_at(2020, 1, 2), _at(2020, 1, 3)]),
        ("@hourly", [_at(2020, 1, 1, 1), _at(2020, 1, 1, 2)]),
    ],
)
def test_fire_times_match_the_cron_crate(expression: str, expected: list[datetime]) -> None:
    assert _upcoming(expression, _at(2020, 1, 1), len(expected)) == expected


@pytest.mark.parametrize(
    ("now", "expression", "wait"),
    [
        (_at(2099, 12, 1, 2), "* * 4 1 12 * 2099", timedelta(hours=2)),
        (_at(2099, 12, 1), "* * * 31 12 * 2099", timedelta(days=30)),
        (_at(2099, 12, 1), "1 * * 1 12 * 2099", timedelta(seconds=1)),
    ],
)
def test_time_to_next_fire_matches_the_original_scheduler_tests(
    now: datetime, expression: str, wait: timedelta
) -> None:
    assert CronSchedule.parse(expression).next_after(now) == now + wait


def test_days_of_week_count_from_sunday_as_one() -> None:
    # 2026-01-04 is a Sunday.
    sunday = CronSchedule.parse("0 0 0 * * 1 *")
    assert sunday.next_after(_at(2026, 1, 1)) == _at(2026, 1, 4)
    assert CronSchedule.parse("0 0 0 * * Sat *").days_of_week == frozenset({7})
    assert CronSchedule.parse("0 0 0 * * Mon-Fri").days_of_week == frozenset({2, 3, 4, 5, 6})


def test_day_of_month_and_day_of_week_must_both_match() -> None:
    # The first of a month that falls on a Monday, after 2026-01-05: 2026-06-01.
    schedule = CronSchedule.parse("0 0 10 1 * Mon *")
    assert schedule.next_after(_at(2026, 1, 5)) == _at(2026, 6, 1, 10)


def test_includes_reads_every_field_to_the_second() -> None:
    schedule = CronSchedule.parse("0 0 0 2-31/10 * ?")
    assert schedule.includes(_at(2020, 1, 12))
    assert not schedule.includes(_at(2020, 1, 11))
    assert not schedule.includes(_at(2020, 1, 12, 0, 0, 1))


def test_names_are_case_insensitive_and_full_names_work() -> None:
    schedule = CronSchedule.parse("0 30 9,12,15 1,15 May-Aug Mon,Wed,Fri 2018/2")
    assert schedule.months == frozenset({5, 6, 7, 8})
    assert schedule.days_of_week == frozenset({2, 4, 6})
    assert 2018 in schedule.years and 2019 not in schedule.years
    assert CronSchedule.parse("0 0 0 * JANUARY tues,THURS").days_of_week == frozenset({3, 5})


def test_no_fire_time_left_gives_none() -> None:
    assert CronSchedule.parse("0 0 10 * * Mon 2020").next_after(_at(2026, 1, 1)) is None
    assert CronSchedule.parse("0 0 0 30 Feb * *").next_after(_at(2026, 1, 1)) is None
    assert CronSchedule.parse("* * * * * * 2100").next_after(_at(2101, 1, 1)) is None


def test_sub_second_moments_fire_at_the_next_whole_second() -> None:
    after = datetime(2026, 1, 5, 10, 0, 0, 500_000, tzinfo=UTC)
    assert CronSchedule.parse("* * * * * * *").next_after(after) == _at(2026, 1, 5, 10, 0, 1)


def test_wall_clock_fields_are_read_in_the_zone_of_the_moment() -> None:
    paris = ZoneInfo("Europe/Paris")
    schedule = CronSchedule.parse("0 0 10 * * * *")
    found = schedule.next_after(_at(2026, 1, 5, 0).astimezone(paris))
    assert found is not None
    assert found.astimezone(UTC) == _at(2026, 1, 5, 9)


def test_wall_times_skipped_by_daylight_saving_never_fire() -> None:
    # Europe/Paris jumps from 02:00 to 03:00 on 2026-03-29: 02:30 does not exist that day.
    paris = ZoneInfo("Europe/Paris")
    schedule = CronSchedule.parse("0 30 2 * * * *")
    found = schedule.next_after(datetime(2026, 3, 29, 0, 0, tzinfo=paris))
    assert found == datetime(2026, 3, 30, 2, 30, tzinfo=paris)


@pytest.mark.parametrize(
    ("expression", "complaint"),
    [
        ("* * * * *", "5 fields"),
        ("1 2 3 4 5 6 7 8 9 2019", "10 fields"),
        ("60 * * * * *", "seconds: 60 is outside 0-59"),
        ("* * 24 * * *", "hours: 24 is outside 0-23"),
        ("* * * 0 * *", "day-of-month: 0 is outside 1-31"),
        ("* * * * 13 *", "month: 13 is outside 1-12"),
        ("* * * * * 0", "day-of-week: 0 is outside 1-7"),
        ("* * * * * * 1969", "year: 1969 is outside 1970-2100"),
        ("0/0 * * * * *", "step"),
        ("* * * * * Wed/4", "single name cannot take a step"),
        ("* * * * * Fun", "not a known name"),
        ("* Mon * * * *", "names are not allowed"),
        ("* * 12-10 * * *", "runs backwards"),
        ("* * * * Jan-3 *", "mixes a number and a name"),
        ("? * * * * *", "seconds"),
        ("* * * 1,,2 * *", "empty item"),
        ("* * * L * *", "day-of-month: names are not allowed"),
        ("* * * * * 5#3", "not a number"),
    ],
)
def test_expressions_the_original_rejects_are_refused_with_the_field_named(
    expression: str, complaint: str
) -> None:
    with pytest.raises(CronError, match=complaint):
        CronSchedule.parse(expression)


def test_question_mark_means_any_in_the_day_fields() -> None:
    schedule = CronSchedule.parse("0-59 * 0-23 ?/2 1,2-4 ? *")
    assert schedule.days_of_week == frozenset(range(1, 8))
    assert schedule.days_of_month == frozenset(range(1, 32, 2))
    assert schedule.months == frozenset({1, 2, 3, 4})


@pytest.mark.parametrize(
    "expression", ["0 0 ² * * * *", "0 0 \u0661 * * * *", "0/² * * * * * *", "0 0 1-\u0663 * * * *"]
)
def test_digits_other_than_ascii_are_refused_as_a_cron_error(expression: str) -> None:
    with pytest.raises(CronError, match=r"not a number|a positive integer"):
        CronSchedule.parse(expression)


@settings(max_examples=200, deadline=1000)
@given(st.one_of(outside_text(), _FIELDS_OF_TEXT))
def test_the_cron_parser_refuses_any_text_with_its_typed_error(expression: str) -> None:
    try:
        CronSchedule.parse(expression)
    except CronError as error:
        assert len(str(error)) < 2_000

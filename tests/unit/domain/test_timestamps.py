"""RFC 3339 parsing and formatting."""

from datetime import UTC, datetime, timedelta

import pytest

from brupop.domain.timestamps import (
    EARLIEST,
    LATEST,
    TimestampError,
    format_rfc3339,
    later,
    parse_rfc3339,
    rfc3339_or_none,
)

NOON = datetime(2026, 1, 5, 12, tzinfo=UTC)


def test_nanoseconds_are_truncated_to_microseconds() -> None:
    assert parse_rfc3339("2022-07-09T19:32:38.609610964+00:00") == datetime(
        2022, 7, 9, 19, 32, 38, 609610, tzinfo=UTC
    )


def test_offsets_are_converted_to_utc() -> None:
    assert parse_rfc3339("2022-07-09T21:00:00+02:00") == datetime(2022, 7, 9, 19, tzinfo=UTC)


def test_format_writes_plus_zero_offset() -> None:
    assert format_rfc3339(datetime(2022, 7, 9, 19, tzinfo=UTC)) == "2022-07-09T19:00:00+00:00"


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(TimestampError):
        format_rfc3339(datetime(2022, 7, 9, 19))


@pytest.mark.parametrize("text", ["", "now", "2022-07-09T19:00:00", "2022-07-09T25:00:00Z"])
def test_bad_text_raises_timestamp_error(text: str) -> None:
    with pytest.raises(TimestampError):
        parse_rfc3339(text)


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_a_moment_outside_the_representable_years_in_utc_is_a_timestamp_error(text: str) -> None:
    with pytest.raises(TimestampError, match="out of range"):
        parse_rfc3339(text)


def test_an_optional_timestamp_reads_as_none_when_absent_or_unreadable() -> None:
    assert rfc3339_or_none("2026-01-05T10:00:00Z") == datetime(2026, 1, 5, 10, tzinfo=UTC)
    assert [rfc3339_or_none(v) for v in (None, 17, "yesterday", "0001-01-01T00:00:00+01:00")] == [
        None
    ] * 4


def test_a_deadline_past_the_last_representable_instant_saturates_instead_of_raising() -> None:
    edge = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert later(edge, timedelta(minutes=2)) == LATEST
    assert later(datetime(1, 1, 1, tzinfo=UTC), -timedelta(days=1)) == EARLIEST
    assert later(NOON, timedelta(hours=1)) == NOON + timedelta(hours=1)

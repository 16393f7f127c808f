"""The lines that say a run had its own clock: where it starts (in the zone a --start-at was
read in) and, in the summary, where it ended and how far it stepped ahead."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.simulation.flags.clock_flags import ClockChoice
from brupop.simulation.outcome.clock_lines import clock_line, clock_summary


def test_the_start_line_shows_the_start_in_the_zone_it_was_read_in() -> None:
    choice = ClockChoice(datetime(2026, 12, 7, 0, 0, tzinfo=UTC), "Europe/Paris", 100000.0)

    line = clock_line(choice, datetime(2026, 12, 7, 0, 0, tzinfo=UTC))

    assert line == (
        "clock starts at 2026-12-07T01:00:00+01:00 (Europe/Paris), up to 100000x while the "
        "fleet waits on it"
    )


def test_a_clock_that_only_starts_elsewhere_says_no_rate() -> None:
    choice = ClockChoice(datetime(2021, 3, 1, 12, 0, tzinfo=UTC))

    assert clock_line(choice, choice.start_at or datetime.now(UTC)) == (
        "clock starts at 2021-03-01T12:00:00+00:00 (UTC)"
    )


def test_the_summary_says_where_the_clock_ended_and_how_far_it_stepped() -> None:
    clock: dict[str, object] = {
        "started_at": "2026-12-21T03:00:00+01:00",
        "ended_at": "2027-01-04T02:00:12+01:00",
        "zone": "Europe/Paris",
        "rate": 1000000.0,
        "fast_forward_seconds": 1205994.8,
    }

    assert clock_summary(clock) == (
        "clock: 2026-12-21T03:00:00+01:00 to 2027-01-04T02:00:12+01:00 (Europe/Paris); "
        "335.0 h stepped ahead at up to 1000000x"
    )


def test_a_clock_that_never_stepped_says_only_where_it_ran() -> None:
    clock: dict[str, object] = {
        "started_at": "2021-03-01T12:00:00+00:00",
        "ended_at": "2021-03-01T12:00:09+00:00",
        "zone": "UTC",
        "rate": 1.0,
        "fast_forward_seconds": 0.0,
    }

    assert (
        clock_summary(clock)
        == "clock: 2021-03-01T12:00:00+00:00 to 2021-03-01T12:00:09+00:00 (UTC)"
    )

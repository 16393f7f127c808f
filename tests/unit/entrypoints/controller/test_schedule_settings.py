"""SCHEDULER_TIME_ZONE and SCHEDULER_CRON_EXPRESSION from a hostile environment: a tzdata folder
(`US`), a path or Unicode digits stop the controller at start with exit 2 and one line naming
the variable, never a traceback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.controller_start import controller_environment, refusal_at_start

SCHEDULE_VARIABLES = ("SCHEDULER_CRON_EXPRESSION", "SCHEDULER_TIME_ZONE", "UPDATE_WINDOW_START")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from controller_environment(monkeypatch, SCHEDULE_VARIABLES)


@pytest.mark.parametrize(
    ("variable", "value", "reason"),
    [
        ("SCHEDULER_TIME_ZONE", "US", "a group of time zones"),
        ("SCHEDULER_TIME_ZONE", "Europe", "a group of time zones"),
        ("SCHEDULER_TIME_ZONE", "../etc/passwd", "not an IANA time zone"),
        ("SCHEDULER_TIME_ZONE", "Europe/" + "x" * 300, "1 to 64 characters"),
        ("SCHEDULER_CRON_EXPRESSION", "0 0 ² * * * *", "hours: '²' is not a number"),
        ("SCHEDULER_CRON_EXPRESSION", "0 0 \u0661 * * * *", "hours: '\u0661' is not a number"),
        ("SCHEDULER_CRON_EXPRESSION", "0/³ * * * * * *", "must be a positive integer"),
        ("SCHEDULER_CRON_EXPRESSION", "0 " * 100_000, "longer than 1024 characters"),
    ],
)
def test_a_hostile_schedule_setting_stops_the_controller_with_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    reason: str,
) -> None:
    err = refusal_at_start(monkeypatch, capsys, variable, value)

    assert err.startswith(f"brupop controller: {variable}: ")
    assert reason in err
    assert len(err) < 600

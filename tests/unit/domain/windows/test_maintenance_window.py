"""Maintenance windows on real expressions: next window, windowed or one-shot, legacy hours."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from brupop.domain.windows.maintenance_window import (
    DEFAULT_EXPRESSION,
    MaintenanceWindow,
    WindowGate,
    WindowKind,
    WindowSettingError,
    choose_expression,
    classify,
    legacy_window_expression,
)

MONDAY_10 = datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)


def _monday(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return MONDAY_10.replace(hour=hour, minute=minute, second=second)


@pytest.mark.parametrize(
    ("expression", "now", "next_window", "kind"),
    [
        ("* * * * * * *", MONDAY_10, _monday(10, 0, 1), WindowKind.WINDOWED),
        ("* * 10-12 * * Mon *", _monday(8), _monday(10), WindowKind.WINDOWED),
        ("* * 10-12 * * Mon *", _monday(13), _monday(10) + timedelta(days=7), WindowKind.WINDOWED),
        ("0 0 10 * * Mon *", MONDAY_10, _monday(10) + timedelta(days=7), WindowKind.ONESHOT),
        ("0 0 10 * * Mon *", _monday(9), _monday(10), WindowKind.ONESHOT),
        ("* * 22-23,0-2 * * * *", _monday(12), _monday(22), WindowKind.WINDOWED),
    ],
)
def test_real_expressions_give_the_expected_next_window_and_kind(
    expression: str, now: datetime, next_window: datetime, kind: WindowKind
) -> None:
    window = MaintenanceWindow.starting(expression, now=now)
    assert window.next_opening(now) == next_window
    assert window.kind is kind


def test_every_second_is_inside_the_default_window() -> None:
    window = MaintenanceWindow.starting(DEFAULT_EXPRESSION, now=MONDAY_10)
    assert window.includes(MONDAY_10) and window.includes(_monday(23, 59, 59))


def test_a_monday_morning_window_is_open_only_from_10_to_12_59_59() -> None:
    window = MaintenanceWindow.starting("* * 10-12 * * Mon *", now=_monday(8))
    assert [window.includes(t) for t in (_monday(9, 59, 59), _monday(10), _monday(12, 59, 59))] == [
        False,
        True,
        True,
    ]
    assert not window.includes(_monday(13))
    assert not window.includes(_monday(11) + timedelta(days=1))


def test_a_window_starting_in_its_last_second_is_still_windowed() -> None:
    # The original compared only the next two fire times (12:59:59 and next Monday 10:00:00)
    # and called this one-shot; the third fire time settles it.
    window = MaintenanceWindow.starting("* * 10-12 * * Mon *", now=_monday(12, 59, 58))
    assert window.kind is WindowKind.WINDOWED


def test_spacing_other_than_one_second_is_one_shot_as_in_the_original() -> None:
    t = MONDAY_10
    assert classify([t, t + timedelta(seconds=2), t + timedelta(seconds=4)]) is WindowKind.ONESHOT
    assert classify([t, t + timedelta(days=7)]) is WindowKind.ONESHOT
    assert classify([t, t + timedelta(seconds=1)]) is WindowKind.WINDOWED


def test_an_expression_in_a_past_year_is_refused_at_start() -> None:
    with pytest.raises(WindowSettingError) as caught:
        MaintenanceWindow.starting("0 0 10 * * Mon 2020", now=MONDAY_10)
    assert caught.value.variable == "SCHEDULER_CRON_EXPRESSION"
    assert "no fire time" in str(caught.value)


def test_an_unparsable_expression_names_the_variable() -> None:
    with pytest.raises(WindowSettingError, match=r"^SCHEDULER_CRON_EXPRESSION: .*5 fields"):
        MaintenanceWindow.starting("* * * * *", now=MONDAY_10)


def test_the_time_zone_setting_moves_the_window() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")  # UTC+9, no daylight saving
    window = MaintenanceWindow.starting("* * 10-12 * * Mon *", now=MONDAY_10, zone=tokyo)
    assert window.includes(datetime(2026, 1, 5, 1, 30, tzinfo=UTC))
    assert not window.includes(MONDAY_10)
    opening = window.next_opening(MONDAY_10)
    assert opening is not None and opening.astimezone(UTC) == datetime(2026, 1, 12, 1, tzinfo=UTC)


# --- the deprecated UPDATE_WINDOW_START / UPDATE_WINDOW_STOP ----------------------------


@pytest.mark.parametrize(
    ("start", "stop", "expression"),
    [
        ("0:0:0", "5:0:0", "* * 0-5 * * * *"),
        ("21:0:0", "8:30:0", "* * 21-23,0-8 * * * *"),
        ("15:0:0", "3:30:34", "* * 15-23,0-3 * * * *"),
        ("09:00:00", "21:00:00", "* * 9-21 * * * *"),
        ("0:0:0", "0:0:0", "* * 0-0 * * * *"),
    ],
)
def test_legacy_window_uses_hours_only_like_the_original(
    start: str, stop: str, expression: str
) -> None:
    assert legacy_window_expression(start, stop) == expression


def test_legacy_window_across_midnight_includes_the_stop_hour() -> None:
    expression = legacy_window_expression("22:00:00", "02:30:00")
    window = MaintenanceWindow.starting(expression, now=_monday(12), variable="UPDATE_WINDOW")
    tuesday = _monday(0) + timedelta(days=1)
    assert window.kind is WindowKind.WINDOWED
    assert window.next_opening(_monday(12)) == _monday(22)
    assert window.includes(_monday(23, 59, 59)) and window.includes(tuesday)
    assert window.includes(tuesday.replace(hour=2, minute=59, second=59))
    assert not window.includes(tuesday.replace(hour=3))
    assert window.next_opening(tuesday.replace(hour=3)) == tuesday.replace(hour=22)


@pytest.mark.parametrize(("variable", "value"), [("START", "24:00:00"), ("STOP", "9am")])
def test_a_bad_legacy_time_names_its_variable(variable: str, value: str) -> None:
    start, stop = ("09:00:00", value) if variable == "STOP" else (value, "21:00:00")
    with pytest.raises(WindowSettingError, match=f"^UPDATE_WINDOW_{variable}: "):
        legacy_window_expression(start, stop)


def test_half_a_legacy_window_is_refused() -> None:
    with pytest.raises(WindowSettingError, match="set both"):
        choose_expression(None, "09:00:00", None)


def test_the_cron_expression_wins_over_a_legacy_window() -> None:
    choice = choose_expression("* * 5 * * * *", "09:00:00", "21:00:00")
    assert choice.expression == "* * 5 * * * *"
    assert choice.legacy_window_ignored


def test_the_legacy_window_applies_when_no_cron_expression_is_set() -> None:
    choice = choose_expression(None, "09:00:00", "21:00:00")
    assert (choice.expression, choice.source) == (
        "* * 9-21 * * * *",
        "UPDATE_WINDOW_START/UPDATE_WINDOW_STOP",
    )


def test_nothing_set_means_always_open() -> None:
    assert choose_expression(None, None, None).expression == "* * * * * * *"


# --- the gate carried from pass to pass --------------------------------------------------


def test_a_windowed_gate_follows_the_clock() -> None:
    window = MaintenanceWindow.starting("* * 10-12 * * Mon *", now=_monday(8))
    gate = WindowGate(_monday(8))
    assert not gate.advance(window, _monday(9), any_ready=True).is_open
    assert gate.advance(window, _monday(11), any_ready=True).is_open
    assert gate.advance(window, _monday(11), any_ready=False).is_open


def test_a_one_shot_trigger_stays_open_until_no_node_is_ready() -> None:
    window = MaintenanceWindow.starting("0 0 10 * * Mon *", now=_monday(9))
    gate = WindowGate(_monday(9)).advance(window, _monday(9, 59, 59), any_ready=True)
    assert not gate.is_open
    gate = gate.advance(window, _monday(10, 0, 2), any_ready=True)
    assert gate.is_open
    gate = gate.advance(window, _monday(11), any_ready=True)
    assert gate.is_open, "the round lasts past the trigger second while nodes are ready"
    gate = gate.advance(window, _monday(11, 0, 2), any_ready=False)
    assert not gate.is_open
    gate = gate.advance(window, _monday(12), any_ready=True)
    assert not gate.is_open, "a node ready later waits for the next trigger"
    next_monday = _monday(10, 0, 1) + timedelta(days=7)
    assert gate.advance(window, next_monday, any_ready=True).is_open

"""MaintenanceWindow: when the controller may start updating nodes.

A cron schedule is either *windowed* (new nodes may start while the current second matches,
e.g. `* * 10-12 * * Mon *`) or *one-shot* (each fire time triggers a round that lasts until no
node is ready, e.g. `0 0 10 * * Mon *`). As in the original, the kind is decided once, from the
spacing of the next fire times: 1 s apart means windowed. Nodes already updating always finish.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from itertools import pairwise

from brupop.domain.windows.cron_schedule import FORMAT_HELP, CronError, CronSchedule

DEFAULT_EXPRESSION = "* * * * * * *"
CRON_VARIABLE = "SCHEDULER_CRON_EXPRESSION"
LEGACY_VARIABLES = "UPDATE_WINDOW_START/UPDATE_WINDOW_STOP"
LEGACY_TIME = re.compile(r"^(2[0-3]|[01]?[0-9]):([0-5]?[0-9]):([0-5]?[0-9])$")
_ONE_SECOND = timedelta(seconds=1)


class WindowKind(StrEnum):
    """How a schedule gates new updates."""

    WINDOWED = "windowed"
    ONESHOT = "oneshot"


class WindowSettingError(ValueError):
    """The schedule settings cannot be used; `variable` names the setting at fault."""

    def __init__(self, variable: str, message: str) -> None:
        super().__init__(f"{variable}: {message}")
        self.variable = variable
        self.problem = message


@dataclass(frozen=True)
class ScheduleChoice:
    """The expression in force, where it came from, and whether a legacy window was ignored."""

    expression: str
    source: str
    legacy_window_ignored: bool = False


def choose_expression(cron: str | None, start: str | None, stop: str | None) -> ScheduleChoice:
    """Pick the schedule as the original does: the cron expression wins over the deprecated
    UPDATE_WINDOW_START/STOP pair (which must be set together); neither means always open."""
    if (start is None) != (stop is None):
        raise WindowSettingError(
            LEGACY_VARIABLES, "set both UPDATE_WINDOW_START and UPDATE_WINDOW_STOP, or neither"
        )
    if cron is not None:
        return ScheduleChoice(cron, CRON_VARIABLE, legacy_window_ignored=start is not None)
    if start is not None and stop is not None:
        return ScheduleChoice(legacy_window_expression(start, stop), LEGACY_VARIABLES)
    return ScheduleChoice(DEFAULT_EXPRESSION, "default")


def legacy_window_expression(start: str, stop: str) -> str:
    """The original's conversion of `HH:MM:SS` bounds: only the hours count, the stop hour is
    included, and a start after the stop wraps past midnight."""
    hours = []
    for variable, value in (("UPDATE_WINDOW_START", start), ("UPDATE_WINDOW_STOP", stop)):
        match = LEGACY_TIME.match(value)
        if match is None:
            raise WindowSettingError(variable, f"{value!r} is not a time of day HH:MM:SS")
        hours.append(int(match.group(1)))
    first, last = hours
    if first <= last:
        return f"* * {first}-{last} * * * *"
    return f"* * {first}-23,0-{last} * * * *"


@dataclass(frozen=True)
class MaintenanceWindow:
    """A parsed schedule, its kind and the time zone its wall-clock fields are read in."""

    schedule: CronSchedule
    kind: WindowKind
    zone: tzinfo = UTC

    @classmethod
    def starting(
        cls, expression: str, *, now: datetime, zone: tzinfo = UTC, variable: str = CRON_VARIABLE
    ) -> MaintenanceWindow:
        """Parse and classify `expression` at start-up; WindowSettingError when it does not
        parse or has no fire time left (a year in the past)."""
        try:
            schedule = CronSchedule.parse(expression)
        except CronError as error:
            text = str(error)
            help_ = "" if FORMAT_HELP in text else f"; expected {FORMAT_HELP}"
            raise WindowSettingError(variable, text + help_) from None
        times = _upcoming(schedule, now.astimezone(zone), count=3)
        if not times:
            raise WindowSettingError(variable, f"{expression!r} has no fire time after {now}")
        return cls(schedule, classify(times), zone)

    def includes(self, moment: datetime) -> bool:
        """The second of `moment` lies inside the schedule."""
        return self.schedule.includes(moment.astimezone(self.zone))

    def next_opening(self, after: datetime) -> datetime | None:
        """The first fire time strictly after `after`, in the schedule's time zone."""
        return self.schedule.next_after(after.astimezone(self.zone))


def classify(times: list[datetime]) -> WindowKind:
    """Windowed when two consecutive upcoming fire times are exactly one second apart.

    The original looked only at the next two; a third also classifies a windowed schedule
    correctly when the process starts in the last second of a window.
    """
    pairs = pairwise(times)
    return (
        WindowKind.WINDOWED
        if any(later - earlier == _ONE_SECOND for earlier, later in pairs)
        else WindowKind.ONESHOT
    )


def _upcoming(schedule: CronSchedule, after: datetime, *, count: int) -> list[datetime]:
    times: list[datetime] = []
    moment: datetime | None = after
    while moment is not None and len(times) < count:
        moment = schedule.next_after(moment)
        if moment is not None:
            times.append(moment)
    return times


@dataclass(frozen=True)
class WindowGate:
    """Whether new nodes may start, carried from one pass to the next.

    `checked_until` is the last moment already examined for a one-shot trigger; `triggered`
    stays true until a pass finds no node ready to start.
    """

    checked_until: datetime
    triggered: bool = False
    is_open: bool = False

    def advance(self, window: MaintenanceWindow, now: datetime, *, any_ready: bool) -> WindowGate:
        """The gate for the pass at `now`."""
        if window.kind is WindowKind.WINDOWED:
            return WindowGate(now, triggered=False, is_open=window.includes(now))
        triggered = self.triggered
        if not triggered:
            fire = window.next_opening(self.checked_until)
            triggered = fire is not None and fire <= now
        if not triggered or not any_ready:
            return WindowGate(now, triggered=False, is_open=False)
        return WindowGate(self.checked_until, triggered=True, is_open=True)

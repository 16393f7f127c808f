"""ZonedWindow: one update window, a cron schedule read on the wall clock of an IANA time zone.

A window is open during every second whose local wall-clock time (in its zone, at that real
instant) the cron matches, e.g. `* * 2-3 * * * *` with `Europe/Paris` is open from 02:00:00
to 03:59:59 Paris time. Daylight saving follows from that one rule:

- spring forward: wall times the clock skips never occur, so a window that lies wholly in the
  skipped hour (02:30 on the day Paris jumps from 02:00 to 03:00) does not open that day, and
  one that straddles it is open for its remaining part only;
- fall back: wall times the clock repeats occur twice, so a window in the repeated hour is
  open both times (a 01:00-01:59 window on that day is open for two real hours).

Searches run on real (UTC) time, one stretch of constant UTC offset at a time, so that wall
times never have to be compared across a change of offset.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

from brupop.domain.windows.cron_schedule import FORMAT_HELP, CronError, CronSchedule

ZONE_NAME_MAX_LENGTH = 64
_SECOND = timedelta(seconds=1)
_DAY = timedelta(days=1)


class WindowError(ValueError):
    """A window that cannot be used: its cron does not parse or its zone is unknown."""


@dataclass(frozen=True)
class ZonedWindow:
    """A parsed window: its schedule, its zone and the zone's name as given."""

    schedule: CronSchedule
    zone: tzinfo
    zone_name: str = "UTC"

    def is_open(self, moment: datetime) -> bool:
        """The second of `moment` lies inside the window."""
        return self.schedule.includes(moment.astimezone(self.zone))

    def next_open(self, after: datetime, limit: datetime) -> datetime | None:
        """The first whole second at or after `after` (UTC) at which the window is open; None
        when there is none before `limit`."""
        moment = _ceil_second(after.astimezone(UTC))
        while moment < limit:
            offset = _offset(self.zone, moment)
            fixed = timezone(offset)
            found = self.schedule.next_after((moment - _SECOND).astimezone(fixed))
            if found is None:
                return None
            found = found.astimezone(UTC)
            if found >= limit:
                return None
            change = _offset_change(self.zone, moment, found)
            if change is None:
                return found
            moment = change
        return None

    def first_closed(self, start: datetime, limit: datetime) -> datetime | None:
        """The first whole second at or after `start` (UTC) at which the window is closed; None
        when it stays open until `limit`."""
        moment = start.astimezone(UTC).replace(microsecond=0)
        while moment < limit:
            offset = _offset(self.zone, moment)
            segment_end = _offset_change(self.zone, moment, limit) or limit
            wall = (moment + offset).replace(tzinfo=None)
            wall_end = (segment_end + offset).replace(tzinfo=None)
            miss = self.schedule.first_miss(wall, wall_end)
            if miss is not None:
                return (miss - offset).replace(tzinfo=UTC)
            moment = segment_end
        return None


def parse_window(cron: str, time_zone: str) -> ZonedWindow:
    """The window `{cron, timeZone}`; WindowError with a short reason when either is bad."""
    try:
        schedule = CronSchedule.parse(cron)
    except CronError as error:
        text = str(error)
        raise WindowError(
            text if FORMAT_HELP in text else f"{text}; expected {FORMAT_HELP}"
        ) from None
    return ZonedWindow(schedule, zone_named(time_zone), time_zone)


def zone_named(name: str) -> tzinfo:
    """The IANA time zone `name`; WindowError when `ZoneInfo` cannot load it.

    The one check for every zone brupop reads (policy windows, SCHEDULER_TIME_ZONE): a name is
    a zone exactly when `ZoneInfo` loads it. What it raises otherwise depends on the name and
    the platform (KeyError, IsADirectoryError for a tzdata folder such as `US`, OSError for
    a name too long for the file system, ValueError for `../x` or a NUL byte, struct.error for
    a truncated file), so any failure to load is the same refusal.
    """
    if name == "UTC":
        return UTC
    if not 0 < len(name) <= ZONE_NAME_MAX_LENGTH:
        raise WindowError(f"a time zone name has 1 to {ZONE_NAME_MAX_LENGTH} characters")
    try:
        return ZoneInfo(name)
    except IsADirectoryError:
        raise WindowError(
            f"{name!r} is a group of time zones, not a time zone; name one, "
            "e.g. America/New_York or Europe/Paris"
        ) from None
    except Exception:  # whatever else ZoneInfo raises, it cannot load the zone
        raise WindowError(
            f"{name!r} is not an IANA time zone name; e.g. UTC, Europe/Paris or America/New_York"
        ) from None


def _offset(zone: tzinfo, moment: datetime) -> timedelta:
    return moment.astimezone(zone).utcoffset() or timedelta(0)


def _offset_change(zone: tzinfo, start: datetime, limit: datetime) -> datetime | None:
    """The first instant in (start, limit] at which `zone`'s UTC offset differs from the one
    at `start`, to the second; None when it stays the same. Offsets are probed a day apart
    (no zone changes its offset twice within a day) and the change found by bisection."""
    if zone is UTC or isinstance(zone, timezone):
        return None
    base = _offset(zone, start)
    probe = start
    while probe < limit:
        ahead = min(probe + _DAY, limit)
        if _offset(zone, ahead) != base:
            low, high = 0, int((ahead - probe).total_seconds())
            while high - low > 1:
                middle = (low + high) // 2
                if _offset(zone, probe + timedelta(seconds=middle)) == base:
                    low = middle
                else:
                    high = middle
            return probe + timedelta(seconds=high)
        probe = ahead
    return None


def _ceil_second(moment: datetime) -> datetime:
    whole = moment.replace(microsecond=0)
    return whole if whole == moment else whole + _SECOND

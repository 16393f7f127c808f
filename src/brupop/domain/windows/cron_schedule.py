"""CronSchedule: the original's 7-field cron format, `sec min hour day-of-month month day-of-week
[year]`, parsed and evaluated the way the Rust `cron` crate (0.12) does.

Written here rather than delegated to croniter because croniter differs where it matters: it
numbers days of the week from Sunday = 0 (the original: Sunday = 1 ... Saturday = 7), it ORs a
restricted day-of-month with a restricted day-of-week (the original ANDs them), and it accepts
forms the original rejects (`L`, `#`, `H`). Fire times are whole seconds, evaluated on the wall
clock of the time zone of the moment passed in.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

MAX_YEAR = 2100
_MIN_YEAR = 1970
EXPRESSION_MAX_LENGTH = 1024
_SHOWN_MAX_CHARS = 64
_NUMBER_MAX_DIGITS = 9  # a u32 as the cron crate reads it; far below int()'s digit limit

_MONTH_NAMES = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3,
    "apr": 4, "april": 4, "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7,
    "aug": 8, "august": 8, "sep": 9, "september": 9, "oct": 10, "october": 10,
    "nov": 11, "november": 11, "dec": 12, "december": 12,
}  # fmt: skip
_DAY_NAMES = {
    "sun": 1, "sunday": 1, "mon": 2, "monday": 2, "tue": 3, "tues": 3, "tuesday": 3,
    "wed": 4, "wednesday": 4, "thu": 5, "thurs": 5, "thursday": 5, "fri": 6, "friday": 6,
    "sat": 7, "saturday": 7,
}  # fmt: skip


class CronError(ValueError):
    """A cron expression the original would reject."""


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: Mapping[str, int] | None = None
    allows_any: bool = False

    def everything(self) -> tuple[int, ...]:
        return tuple(range(self.low, self.high + 1))


_FIELDS = (
    _Field("seconds", 0, 59),
    _Field("minutes", 0, 59),
    _Field("hours", 0, 23),
    _Field("day-of-month", 1, 31, allows_any=True),
    _Field("month", 1, 12, names=_MONTH_NAMES),
    _Field("day-of-week", 1, 7, names=_DAY_NAMES, allows_any=True),
    _Field("year", _MIN_YEAR, MAX_YEAR),
)

_SHORTHANDS = {
    "@yearly": "0 0 0 1 1 * *",
    "@monthly": "0 0 0 1 * * *",
    "@weekly": "0 0 0 * * 1 *",
    "@daily": "0 0 0 * * * *",
    "@hourly": "0 0 * * * * *",
}

FORMAT_HELP = (
    "6 or 7 fields `sec min hour day-of-month month day-of-week [year]` with lists, ranges, "
    "steps and Jan..Dec / Sun..Sat names (Sunday = 1), e.g. `* * 10-12 * * Mon *`, "
    "or @yearly/@monthly/@weekly/@daily/@hourly"
)


@dataclass(frozen=True)
class CronSchedule:
    """The set of whole seconds a cron expression matches."""

    expression: str
    seconds: frozenset[int]
    minutes: frozenset[int]
    hours: frozenset[int]
    days_of_month: frozenset[int]
    months: frozenset[int]
    days_of_week: frozenset[int]
    years: frozenset[int]

    @classmethod
    def parse(cls, expression: str) -> CronSchedule:
        """Parse `expression`; CronError names the field at fault."""
        if len(expression) > EXPRESSION_MAX_LENGTH:
            raise CronError(f"longer than {EXPRESSION_MAX_LENGTH} characters")
        text = _SHORTHANDS.get(expression.strip(), expression)
        parts = text.split()
        if len(parts) not in (6, 7):
            raise CronError(f"{_shown(expression)} has {len(parts)} fields; expected {FORMAT_HELP}")
        if len(parts) == 6:
            parts.append("*")
        sets = [
            frozenset(_parse_field(part, field)) for part, field in zip(parts, _FIELDS, strict=True)
        ]
        return cls(expression, *sets)

    def includes(self, moment: datetime) -> bool:
        """The wall-clock second of `moment` (in its own time zone) is a fire time."""
        return (
            self._day_matches(moment.date())
            and moment.hour in self.hours
            and moment.minute in self.minutes
            and moment.second in self.seconds
        )

    def next_after(self, after: datetime) -> datetime | None:
        """The first fire time strictly after `after`, in `after`'s time zone; None if none is
        left before the end of year 2100 (e.g. a year field in the past)."""
        zone = after.tzinfo or UTC
        start = after.replace(tzinfo=None, microsecond=0) + timedelta(seconds=1)
        day: date | None = start.date()
        floor = start.time()
        while day is not None:
            if self._day_matches(day):
                for clock in self._times_from(floor):
                    found = _existing(datetime.combine(day, clock), zone)
                    if found is not None and found > after:
                        return found
            day, floor = self._next_candidate_day(day), time(0, 0, 0)
        return None

    def first_miss(self, start: datetime, limit: datetime) -> datetime | None:
        """The first whole second in [`start`, `limit`) whose wall-clock fields the schedule
        does not match, None when it matches them all. Both are read as wall-clock times as
        they are (no time zone conversion), so the caller passes times of one UTC offset.

        Jumps over whole minutes, hours and days that match, so a window of hours costs a
        few steps rather than one per second.
        """
        moment = start.replace(microsecond=0)
        every_second, every_minute = len(self.seconds) == 60, len(self.minutes) == 60
        every_hour = len(self.hours) == 24
        while moment < limit:
            if not self.includes(moment):
                return moment
            if not every_second:
                moment += timedelta(seconds=1)
            elif not every_minute:
                moment = moment.replace(second=0) + timedelta(minutes=1)
            elif not every_hour:
                moment = moment.replace(minute=0, second=0) + timedelta(hours=1)
            else:
                moment = datetime.combine(moment.date() + timedelta(days=1), time(), moment.tzinfo)
        return None

    def _day_matches(self, day: date) -> bool:
        return (
            day.year in self.years
            and day.month in self.months
            and day.day in self.days_of_month
            and day.isoweekday() % 7 + 1 in self.days_of_week
        )

    def _times_from(self, floor: time) -> Iterator[time]:
        for hour in sorted(h for h in self.hours if h >= floor.hour):
            minute_floor = floor.minute if hour == floor.hour else 0
            for minute in sorted(m for m in self.minutes if m >= minute_floor):
                second_floor = floor.second if (hour, minute) == (floor.hour, floor.minute) else 0
                for second in sorted(s for s in self.seconds if s >= second_floor):
                    yield time(hour, minute, second)

    def _next_candidate_day(self, day: date) -> date | None:
        """The next day worth checking: skips whole months and years that cannot match."""
        if day.year not in self.years:
            later = [year for year in self.years if year > day.year]
            return date(min(later), 1, 1) if later else None
        following = (
            _first_of_next_month(day) if day.month not in self.months else day + timedelta(days=1)
        )
        return following if following.year <= MAX_YEAR else None


def _first_of_next_month(day: date) -> date:
    return date(day.year + 1, 1, 1) if day.month == 12 else date(day.year, day.month + 1, 1)


def _existing(wall: datetime, zone: tzinfo) -> datetime | None:
    """`wall` in `zone`, or None when that wall time does not exist there (a DST gap)."""
    aware = wall.replace(tzinfo=zone)
    back = aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    return aware if back == wall else None


def _parse_field(text: str, field: _Field) -> set[int]:
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise CronError(f"{field.name}: empty item in {_shown(text)}")
        values.update(_parse_item(item, field))
    return values


def _parse_item(item: str, field: _Field) -> tuple[int, ...]:
    base, slash, step_text = item.partition("/")
    if not slash:
        return _parse_base(base, field)
    if not _is_number(step_text) or int(step_text) == 0:
        raise CronError(f"{field.name}: step in {_shown(item)} must be a positive integer")
    step = int(step_text)
    if _is_number(base):
        start = _check(int(base), field)
        return tuple(range(start, field.high + 1, step))
    if base.isalpha():
        raise CronError(f"{field.name}: a single name cannot take a step ({_shown(item)})")
    return _parse_base(base, field)[::step]


def _parse_base(base: str, field: _Field) -> tuple[int, ...]:
    if base == "*" or (base == "?" and field.allows_any):
        return field.everything()
    low_text, dash, high_text = base.partition("-")
    if dash:
        low, high = _value(low_text, field), _value(high_text, field)
        if _is_number(low_text) != _is_number(high_text):
            raise CronError(f"{field.name}: range {_shown(base)} mixes a number and a name")
        if low > high:
            raise CronError(f"{field.name}: range {_shown(base)} runs backwards")
        return tuple(range(low, high + 1))
    return (_value(base, field),)


def _is_number(text: str) -> bool:
    """ASCII digits, few enough for a u32: `str.isdigit()` also takes `²` (which `int()`
    refuses) and Arabic-Indic digits (which the original refuses)."""
    return 0 < len(text) <= _NUMBER_MAX_DIGITS and text.isascii() and text.isdigit()


def _value(text: str, field: _Field) -> int:
    if _is_number(text):
        return _check(int(text), field)
    if text.isalpha() and field.names is not None:
        try:
            return field.names[text.lower()]
        except KeyError:
            raise CronError(f"{field.name}: {_shown(text)} is not a known name") from None
    if text.isalpha():
        raise CronError(f"{field.name}: names are not allowed here ({_shown(text)})")
    raise CronError(f"{field.name}: {_shown(text)} is not a number, name, range, list or step")


def _shown(text: str) -> str:
    """`text` quoted for a message, cut short: an expression can be as long as its limit."""
    return repr(text) if len(text) <= _SHOWN_MAX_CHARS else f"{text[:_SHOWN_MAX_CHARS]!r}..."


def _check(value: int, field: _Field) -> int:
    if not field.low <= value <= field.high:
        raise CronError(f"{field.name}: {value} is outside {field.low}-{field.high}")
    return value

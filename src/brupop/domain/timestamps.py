"""RFC 3339 timestamps as brupop writes them (UTC, `+00:00`), read leniently from any offset."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_RFC3339 = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[Tt ](?P<time>\d{2}:\d{2}:\d{2})"
    r"(?:\.(?P<frac>\d+))?(?P<tz>[Zz]|[+-]\d{2}:\d{2})$"
)


EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)
"""The first and last instants a `datetime` holds: where time arithmetic saturates."""


class TimestampError(ValueError):
    """A text that is not an RFC 3339 date-time with an offset."""


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 date-time (any number of fraction digits); the result is UTC-aware."""
    match = _RFC3339.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise TimestampError(f"not an RFC 3339 timestamp: {text!r}")
    frac = (match["frac"] or "")[:6].ljust(6, "0")
    try:
        base = datetime.fromisoformat(f"{match['date']}T{match['time']}.{frac}")
    except ValueError as error:
        raise TimestampError(f"not an RFC 3339 timestamp: {text!r}") from error
    tz = match["tz"]
    if tz in ("Z", "z"):
        offset = UTC
    else:
        sign = 1 if tz[0] == "+" else -1
        hours, minutes = int(tz[1:3]), int(tz[4:6])
        if hours > 23 or minutes > 59:
            raise TimestampError(f"bad offset in timestamp: {text!r}")
        offset = timezone(sign * timedelta(hours=hours, minutes=minutes))
    try:
        return base.replace(tzinfo=offset).astimezone(UTC)
    except OverflowError:  # year 1 east of UTC, or year 9999 west of it
        raise TimestampError(f"timestamp out of range in UTC: {text!r}") from None


def rfc3339_or_none(value: object) -> datetime | None:
    """`value` read as an RFC 3339 date-time; None when it is not a string or not one."""
    if not isinstance(value, str):
        return None
    try:
        return parse_rfc3339(value)
    except TimestampError:
        return None


def format_rfc3339(moment: datetime) -> str:
    """Render a moment as RFC 3339 in UTC with `+00:00`, as the original writes them."""
    if moment.tzinfo is None:
        raise TimestampError("refusing to format a naive datetime")
    return moment.astimezone(UTC).isoformat()


def later(moment: datetime, delta: timedelta) -> datetime:
    """`moment + delta`, saturated at LATEST (or EARLIEST) instead of raising OverflowError.

    Moments read from the cluster (a status an agent wrote, an annotation) may sit at the edge
    of the calendar; a deadline computed from one must not stop the pass that judges it."""
    try:
        return moment + delta
    except OverflowError:
        edge = LATEST if delta > timedelta() else EARLIEST
        return edge if moment.tzinfo is not None else edge.replace(tzinfo=None)

"""The lines that say a run had its own clock: at the start, and in the summary."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from zoneinfo import ZoneInfo

from brupop.simulation.flags.clock_flags import ClockChoice


def clock_line(choice: ClockChoice, started_on: datetime) -> str:
    """`clock starts at 2026-12-07T01:30:00+01:00 (Europe/Paris), up to 3600x while the fleet
    waits on it`."""
    moment = started_on.astimezone(ZoneInfo(choice.zone)).isoformat(timespec="seconds")
    line = f"clock starts at {moment} ({choice.zone})"
    if choice.rate > 1:
        line += f", up to {rate_text(choice.rate)}x while the fleet waits on it"
    return line


def clock_summary(clock: Mapping[str, object]) -> str:
    """`clock: 2026-12-07T01:30:00+01:00 to 2026-12-09T02:00:41+01:00 (Europe/Paris); 48.5 h
    stepped ahead at up to 3600x` (the report's `clock`)."""
    line = f"clock: {clock['started_at']} to {clock['ended_at']} ({clock['zone']})"
    stepped = clock.get("fast_forward_seconds")
    rate = clock.get("rate")
    if isinstance(stepped, int | float) and stepped > 0 and isinstance(rate, int | float):
        line += f"; {_span(stepped)} stepped ahead at up to {rate_text(rate)}x"
    return line


def rate_text(rate: float) -> str:
    """`3600`, `2.5`: a whole rate without its decimals or an exponent."""
    return f"{rate:.0f}" if rate == int(rate) else f"{rate:g}"


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"

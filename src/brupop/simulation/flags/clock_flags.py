"""The `clock` flags of `brupop simulate`: when the simulated fleet's clock starts, and how fast it
may run while every node waits on it, so windows, blackouts, finishBy and release ages can be
rehearsed. Defined and read here; the clock itself is fleet.fast_forward's.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from brupop.cli.fleet_description.flag_values import OptionError

MAX_RATE = 1_000_000.0
EARLIEST_START = datetime(1970, 1, 2, tzinfo=UTC)
LATEST_START = datetime(3000, 1, 1, tzinfo=UTC)  # leaves room for a day at the largest rate


@dataclass(frozen=True)
class ClockChoice:
    """The virtual start (None: now, by this machine's clock) and the rate while waiting."""

    start_at: datetime | None = None  # timezone-aware
    zone: str = "UTC"  # the zone a --start-at without an offset was read in
    rate: float = 1.0

    @property
    def shifted(self) -> bool:
        """The clock is not simply this machine's."""
        return self.start_at is not None or self.rate > 1


def add_clock_flags(parser: argparse.ArgumentParser) -> None:
    clock = parser.add_argument_group("clock")
    clock.add_argument(
        "--start-at",
        default=None,
        metavar="TIME",
        help="start the fleet's clock at this ISO 8601 time (e.g. 2026-12-07T01:30 or "
        "2026-12-07T01:30:00+01:00); a time without an offset is read in the time zone of the "
        "--policy's first window, or in UTC when it has none",
    )
    clock.add_argument(
        "--clock-rate",
        default=None,
        metavar="N",
        help="while every node waits on the clock (a window, a blackout, finishBy, a release "
        "age, a node's age, a canary soak, a backoff) and none is updating, run the clock N "
        "times as fast, never past the moment the first wait ends; while a node updates it "
        "runs at the real rate (default 1)",
    )


def read_clock(args: argparse.Namespace, policy: dict[str, Any] | None) -> ClockChoice:
    """The clock flags, checked; a naive --start-at is read in the policy's first window's zone."""
    rate = _rate(args.clock_rate)
    if args.start_at is None:
        choice = ClockChoice(rate=rate)
    else:
        zone = first_window_zone(policy)
        choice = ClockChoice(_start_at(args.start_at, zone), zone, rate)
    if choice.shifted and args.kubeconfig is not None:
        flag = "--start-at" if choice.start_at is not None else "--clock-rate"
        raise OptionError(
            f"{flag}: not with --kubeconfig: a real API server stamps node ages and tokens "
            "with its own clock"
        )
    return choice


def first_window_zone(policy: dict[str, Any] | None) -> str:
    """The `timeZone` of the policy's first window (the reader checked it), else UTC."""
    windows = ((policy or {}).get("spec") or {}).get("windows") or []
    first = windows[0] if isinstance(windows, list) and windows else None
    zone = first.get("timeZone") if isinstance(first, dict) else None
    return zone if isinstance(zone, str) and zone else "UTC"


def _rate(raw: str | None) -> float:
    if raw is None:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        raise OptionError(f"--clock-rate: {raw!r} is not a number") from None
    if not math.isfinite(value):
        raise OptionError(f"--clock-rate: {raw!r} is not a finite number")
    if value < 1:
        raise OptionError(
            f"--clock-rate: {raw} is below 1; the clock never runs slower than this machine's"
        )
    if value > MAX_RATE:
        raise OptionError(f"--clock-rate: {raw} is more than the {MAX_RATE:g} a simulation allows")
    return value


def _start_at(raw: str, zone_name: str) -> datetime:
    try:
        moment = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise OptionError(
            f"--start-at: {raw!r} is not an ISO 8601 time such as 2026-12-07T01:30 or "
            "2026-12-07T01:30:00+01:00"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_zone(zone_name))
    if not EARLIEST_START <= moment < LATEST_START:
        raise OptionError(f"--start-at: {raw} is outside the years 1970 to 2999")
    return moment


def _zone(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # the policy reader checked it
        raise OptionError(f"--start-at: the time zone {name!r} cannot be loaded") from None

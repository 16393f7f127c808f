"""StartSchedule: when the fleet may start a node, by the clock alone.

Three rules, checked in this order at a moment `t`:

1. Blackouts: no node starts inside a blackout `[start, end)`.
2. Windows: when any are given, a node starts only while at least one is open (their union;
   no windows means the clock does not limit starts here).
3. finishBy: a node starts only when its expected update, `[t, t + expected]`, ends before the
   open stretch it starts in closes (adjacent and overlapping windows merge into one stretch)
   and before the next blackout begins.

`start_verdict` answers for `now`: may a node start, and if not, why (a REASON sentence) and
when it next may (the first moment all three rules allow, searched up to `HORIZON` ahead).
Asked for a `steady` span, a "may start" also says until when within it a start stays
allowed, so a caller need not search again on every pass.
Pure: no clock reads; nodes already updating are never concerned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from brupop.domain.reason import Reason
from brupop.domain.starting.start_holds import StartHold
from brupop.domain.windows.zoned_window import ZonedWindow

HORIZON = timedelta(days=366)
_MAX_STEPS = 2000  # a search jumps from stretch to stretch; this bounds a pathological one


class BlackoutPeriod(Protocol):
    """A period in which no node starts; `start` and `end` are timezone-aware."""

    @property
    def start(self) -> datetime: ...

    @property
    def end(self) -> datetime: ...

    @property
    def reason(self) -> str: ...


@dataclass(frozen=True)
class StartVerdict:
    """The answer for one moment: `hold` is None when a node may start; `next_start` is the
    first moment one may (the moment asked when it may now; None: not within the horizon)."""

    hold: StartHold | None
    next_start: datetime | None
    allowed_until: datetime | None = None
    """While a node may start: every moment in `[now, allowed_until)` allows one too."""

    @property
    def may_start(self) -> bool:
        """A node may start now."""
        return self.hold is None


@dataclass(frozen=True)
class StartSchedule:
    """The windows (empty: no window limits starts), blackouts and finishBy in force."""

    windows: tuple[ZonedWindow, ...] = ()
    blackouts: tuple[BlackoutPeriod, ...] = ()
    finish_by: bool = True


@dataclass(frozen=True)
class _Block:
    reason: Reason
    text: str
    resume: datetime | None  # the first moment worth checking again; None: never


def start_verdict(
    schedule: StartSchedule,
    now: datetime,
    expected_seconds: int,
    *,
    steady: timedelta = timedelta(),
) -> StartVerdict:
    """May a node start at `now`, given the update is expected to take `expected_seconds`?
    When it may, `allowed_until` says for how long of the next `steady` it still may."""
    now = now.astimezone(UTC)
    expected = timedelta(seconds=max(0, expected_seconds))
    horizon = now + HORIZON
    block = _blocked_at(schedule, now, expected, horizon)
    if block is None:
        return StartVerdict(None, now, _allowed_until(schedule, now, expected, steady))
    following = _next_start(schedule, block, expected, horizon)
    return StartVerdict(StartHold(block.reason, _sentence(block, following)), following)


def _allowed_until(
    schedule: StartSchedule, now: datetime, expected: timedelta, steady: timedelta
) -> datetime:
    """The end of `[now, end)`, at most `steady` long, in which a start stays allowed, given
    one is at `now`: before the open stretch closes or a blackout begins, less the expected
    update when finishBy asks for it to fit. The stretch is known open up to `now + fit` (the
    verdict searched that far), so only the `steady` beyond is searched."""
    if steady <= timedelta():
        return now
    fit = expected if schedule.finish_by else timedelta()
    limit = now + fit + steady
    ends = [b.start for b in schedule.blackouts if now < b.start < limit]
    if schedule.windows:
        closes = _stretch_end(schedule.windows, now + fit, limit)
        ends += [closes] if closes is not None else []
    return max(now, min(ends, default=limit) - fit)


def _next_start(
    schedule: StartSchedule, block: _Block, expected: timedelta, horizon: datetime
) -> datetime | None:
    current: _Block | None = block
    for _ in range(_MAX_STEPS):
        if current is None or current.resume is None or current.resume >= horizon:
            return None
        moment = current.resume
        current = _blocked_at(schedule, moment, expected, horizon)
        if current is None:
            return moment
    return None


def _blocked_at(
    schedule: StartSchedule, moment: datetime, expected: timedelta, horizon: datetime
) -> _Block | None:
    inside = [b for b in schedule.blackouts if b.start <= moment < b.end]
    if inside:
        last = max(inside, key=lambda b: b.end)
        text = f"blackout until {_instant(last.end)}{_because(last)}"
        return _Block(Reason.BLACKOUT, text, last.end)
    windows = schedule.windows
    if windows and not any(w.is_open(moment) for w in windows):
        return _Block(
            Reason.OUTSIDE_WINDOW,
            "outside the update windows",
            _next_opening(windows, moment, horizon),
        )
    if not schedule.finish_by:
        return None
    done = moment + expected
    closes = _stretch_end(windows, moment, done) if windows else None
    if closes is not None:
        when = _clock(closes, moment)
        text = f"would not finish before the window closes at {when} ({_took(expected)})"
        return _Block(Reason.FINISH_BY, text, _next_opening(windows, closes, horizon))
    ahead = [b for b in schedule.blackouts if moment < b.start < done]
    if ahead:
        first = min(ahead, key=lambda b: b.start)
        text = (
            f"would not finish before the blackout from {_instant(first.start)}"
            f"{_because(first)} ({_took(expected)})"
        )
        return _Block(Reason.FINISH_BY, text, first.end)
    return None


def _stretch_end(
    windows: Sequence[ZonedWindow], start: datetime, limit: datetime
) -> datetime | None:
    """When the open stretch around `start` (open) closes: the first second no window is
    open; None when it lasts until `limit`."""
    moment = start
    while moment < limit:
        ends = [w.first_closed(moment, limit) for w in windows if w.is_open(moment)]
        if not ends:
            return moment
        if any(end is None for end in ends):
            return None
        moment = max(end for end in ends if end is not None)
    return None


def _next_opening(
    windows: Sequence[ZonedWindow], after: datetime, horizon: datetime
) -> datetime | None:
    found = [o for w in windows if (o := w.next_open(after, horizon)) is not None]
    return min(found, default=None)


def _sentence(block: _Block, following: datetime | None) -> str:
    if following is None:
        return f"{block.text}; no start possible within {HORIZON.days} days"
    if block.reason is Reason.BLACKOUT and following == block.resume:
        return block.text
    return f"{block.text}; next start at {_instant(following)}"


def _because(blackout: BlackoutPeriod) -> str:
    return f": {blackout.reason}" if blackout.reason else ""


def _instant(moment: datetime) -> str:
    """A moment as RFC 3339 in UTC, e.g. 2026-12-27T00:00:00Z."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def _clock(moment: datetime, now: datetime) -> str:
    """The time of day in UTC when it is less than a day away (04:00 UTC), else the date too."""
    utc = moment.astimezone(UTC)
    shown = utc.strftime("%H:%M:%S" if utc.second else "%H:%M")
    return f"{shown} UTC" if utc - now < timedelta(days=1) else _instant(utc)


def _took(expected: timedelta) -> str:
    seconds = expected.total_seconds()
    if seconds < 60:
        return f"expected {seconds:.0f} s"
    return f"expected {math.ceil(seconds / 60)} min"

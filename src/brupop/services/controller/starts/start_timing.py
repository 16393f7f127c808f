"""StartTiming: the update policy's windows, blackouts and finishBy in a controller pass, and
the update durations finishBy learns from.

With no policy object the pass is exactly as before: the environment's window alone decides.
Under a policy, its windows (when it lists any) replace the environment's window; its
blackouts and finishBy apply in any case, finishBy then against the environment's window when
that one is windowed (a one-shot round has no end to finish by, only blackouts).

The durations are the policy status's `updateDurations` (read back whenever the status shown
changes, so they survive a restart or a change of leader) plus the ones this replica measured
as leader and has not yet seen written; they go out with the rest of the policy status.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple, Protocol

from brupop.domain.policy.effective_policy import EffectivePolicy, PolicySource
from brupop.domain.policy.scheduling_policy import UpdateWindow
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.starting.start_holds import StartHold
from brupop.domain.starting.start_schedule import StartSchedule, StartVerdict, start_verdict
from brupop.domain.starting.update_durations import HISTORY_SIZE, UpdateDurations
from brupop.domain.windows.maintenance_window import MaintenanceWindow, WindowKind
from brupop.domain.windows.zoned_window import ZonedWindow, parse_window

REUSE = timedelta(minutes=1)
"""A verdict is reused for at most this long (a hold never past its next start, a "may start"
never past its `allowed_until`): searching the windows can take milliseconds, or more when a
long expected update crosses many short windows, too much for every pass."""


class VerdictSearch(Protocol):
    """How a verdict is searched (`start_verdict`; tests count the searches)."""

    def __call__(
        self, schedule: StartSchedule, now: datetime, expected_seconds: int, *, steady: timedelta
    ) -> StartVerdict: ...


@dataclass(frozen=True)
class ScheduleGate:
    """What the clock allows in this pass: `window_open` is the environment's window as the
    REASON shows it (open when the policy's windows replace it); `hold` the policy's rule that
    holds every start, with its sentence."""

    window_open: bool
    hold: StartHold | None = None

    @property
    def may_start(self) -> bool:
        """Nodes may start as far as the clock is concerned."""
        return self.window_open and self.hold is None


class StartTiming:
    """The policy's clock rules and the learned update durations of one controller replica."""

    def __init__(self, search: VerdictSearch = start_verdict) -> None:
        self._search = search
        self._parsed = _ParsedWindows(given=(), zoned=())
        self._shown: tuple[int, ...] = ()
        self._pending: tuple[float, ...] = ()
        self.history = UpdateDurations()
        self._held: _HeldVerdict | None = None

    def follow_status(self, status: UpdatePolicyStatus | None) -> None:
        """Take the durations the policy status shows (e.g. written before a restart)."""
        shown = status.update_durations if status is not None else ()
        if shown != self._shown:
            self._shown = shown
            self.history = UpdateDurations.of((*shown, *self._pending))

    def measured(self, durations: Iterable[float], *, leading: bool) -> None:
        """Count the updates that completed in this pass. Only the leader counts them (the
        others see them in the status it writes), so none is counted twice."""
        added = tuple(durations)
        if not leading or not added:
            return
        self._pending = (*self._pending, *added)[-HISTORY_SIZE:]
        self.history = UpdateDurations.of((*self._shown, *self._pending))

    def written(self, status: UpdatePolicyStatus) -> None:
        """A status was written: the durations it holds are no longer pending."""
        self._shown = status.update_durations
        self._pending = ()
        self.history = UpdateDurations.of(self._shown)

    def gate(
        self,
        policy: EffectivePolicy,
        window: MaintenanceWindow,
        *,
        window_open: bool,
        now: datetime,
    ) -> ScheduleGate:
        """The clock's say in this pass; `window_open` is the environment window's gate."""
        if policy.source is PolicySource.ENVIRONMENT:
            return ScheduleGate(window_open)
        scheduling = policy.scheduling
        windows = self._windows(scheduling.windows)
        if windows:
            window_open = True
        elif scheduling.finish_by and window.kind is WindowKind.WINDOWED:
            windows = (ZonedWindow(window.schedule, window.zone),)
        schedule = StartSchedule(windows, scheduling.blackouts, scheduling.finish_by)
        verdict = self._verdict(schedule, self.history.expected_seconds, now)
        return ScheduleGate(window_open, verdict.hold)

    def _verdict(self, schedule: StartSchedule, expected: int, now: datetime) -> StartVerdict:
        """The verdict for `now`, reusing a recent one for the same rules (for `REUSE` at
        most): a hold stands until its next start, a "may start" until its `allowed_until`,
        by definition; only a hold's sentence may age."""
        held = self._held
        if (
            held is not None
            and held.schedule == schedule
            and held.expected == expected
            and held.since <= now < held.until
        ):
            return held.verdict
        verdict = self._search(schedule, now, expected, steady=REUSE)
        until = verdict.allowed_until if verdict.may_start else verdict.next_start
        until = min(until or now + REUSE, now + REUSE)
        self._held = None
        if until > now:
            self._held = _HeldVerdict(
                schedule=schedule, expected=expected, since=now, until=until, verdict=verdict
            )
        return verdict

    def _windows(self, given: tuple[UpdateWindow, ...]) -> tuple[ZonedWindow, ...]:
        """The policy's windows parsed (once per change of the policy's list)."""
        if given != self._parsed.given:
            zoned = tuple(parse_window(w.cron, w.time_zone) for w in given)
            self._parsed = _ParsedWindows(given=given, zoned=zoned)
        return self._parsed.zoned


class _ParsedWindows(NamedTuple):
    """The policy's list of windows, as given and as parsed."""

    given: tuple[UpdateWindow, ...]
    zoned: tuple[ZonedWindow, ...]


class _HeldVerdict(NamedTuple):
    """A verdict reused from `since` until `until` for the same rules and expected duration."""

    schedule: StartSchedule
    expected: int
    since: datetime
    until: datetime
    verdict: StartVerdict

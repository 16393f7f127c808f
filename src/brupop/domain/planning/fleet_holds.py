"""The holds that stop every start at once, at a virtual moment: a halt, the policy's pause and
the clock (windows, blackouts, finishBy), as the controller's pass applies them.

The clock's rules are the controller's own (`start_schedule.start_verdict`), read the way
`StartTiming` reads them: with no policy object the environment's window alone decides (the
plan takes it as open: it cannot see the controller's environment); under a policy its windows,
blackouts and finishBy apply. `finish_by` then says, for a start the plan made, whether the
update ends before its window closes and before the next blackout, whether or not the policy
asks for it.
"""

from __future__ import annotations

from datetime import datetime

from brupop.domain.planning.fleet_plan import FinishBy
from brupop.domain.policy.effective_policy import EffectivePolicy, PolicySource
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.reason import Reason
from brupop.domain.starting.start_holds import StartHold
from brupop.domain.starting.start_schedule import StartSchedule, start_verdict
from brupop.domain.windows.zoned_window import parse_window

RESUME = "until `brupop resume`"


class FleetHolds:
    """The fleet-wide holds of one policy, asked at any virtual moment."""

    def __init__(
        self,
        policy: EffectivePolicy,
        status: UpdatePolicyStatus | None,
        expected_seconds: int,
    ) -> None:
        self._policy = policy
        self._status = status
        self._expected = expected_seconds
        scheduling = policy.scheduling
        self._schedule: StartSchedule | None = None
        if policy.source is not PolicySource.ENVIRONMENT:
            windows = tuple(parse_window(w.cron, w.time_zone) for w in scheduling.windows)
            self._schedule = StartSchedule(windows, scheduling.blackouts, scheduling.finish_by)

    def hold(self, now: datetime) -> StartHold | None:
        """What holds every start at `now` (`until`: when the clock next allows one; None for
        a halt or a pause, which only a person lifts, or when no start is possible within the
        schedule's horizon)."""
        status = self._status
        if status is not None and status.halted:
            why = status.halt_reason
            what = f"{why.node} failed {why.check}" if why is not None else "the fleet halted"
            return StartHold(Reason.HALTED, f"halted: {what}; {RESUME}")
        if self._policy.paused:
            return StartHold(Reason.PAUSED, f"the fleet is paused; {RESUME}")
        if self._schedule is None:
            return None
        verdict = start_verdict(self._schedule, now, self._expected)
        if verdict.hold is None:
            return None
        return verdict.hold._replace(until=verdict.next_start)

    def finish_by(self, start: datetime) -> FinishBy | None:
        """Whether an update started at `start` ends before its window closes and before the
        next blackout; None when the policy has neither windows nor blackouts."""
        schedule = self._schedule
        if schedule is None or not (schedule.windows or schedule.blackouts):
            return None
        strict = StartSchedule(schedule.windows, schedule.blackouts, finish_by=True)
        verdict = start_verdict(strict, start, self._expected)
        hold = verdict.hold
        if hold is not None and hold.reason is Reason.FINISH_BY:
            return FinishBy(False, hold.detail)
        return FinishBy(True)

"""The status the controller writes on the `default` update policy: the one builder of it.

Phase and message (`fleet_phase`: Halted, Paused, Blocked, Soaking, Rolling, Idle), the halt
(when it began, the node and check that tipped it, the failures counted), the canaries'
progress, the generation seen, the nodes by state, and the update durations finishBy learns
from (kept here so they survive a restart) with the expectation drawn from them. Pure:
computed from what a pass knows, so the controller can compare it with the status already
written and write only on a change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from brupop.domain.policy.effective_policy import EffectivePolicy, PolicySource
from brupop.domain.policy.update_policy_status import (
    BUDGET_GROUPS_MAX,
    CANARIES_KEPT,
    MESSAGE_MAX_LENGTH,
    NAME_MAX_LENGTH,
    VERSION_MAX_LENGTH,
    BudgetUseStatus,
    CanaryProgress,
    NodeCounts,
    UpdatePolicyStatus,
    VersionSeen,
)
from brupop.domain.printable import printable
from brupop.domain.reporting.fleet_phase import FleetFacts, fleet_phase
from brupop.domain.safety.canary import SoakProgress
from brupop.domain.safety.halt import NOT_HALTED, HaltDecision
from brupop.domain.starting.budget_rule import BudgetUse
from brupop.domain.starting.update_durations import expected_update_seconds
from brupop.domain.states import UpdateState


@dataclass(frozen=True)
class FleetProgress:
    """How the rollout stands after a pass: nodes by reported state, nodes holding a slot,
    nodes that would start but wait (for a slot, the window, a pause or a safety rule), and
    the safety rules' facts."""

    states: Mapping[str, int]
    updating: int
    waiting: int
    halt: HaltDecision = NOT_HALTED
    halted_at: datetime | None = None
    blocked: str | None = None  # the alert gate's reason for holding every start
    soak: SoakProgress | None = None  # None: no canaries in the policy
    durations: tuple[int, ...] = ()  # the last update durations (seconds), newest last
    versions_seen: tuple[VersionSeen, ...] = ()  # first-seen times of offered versions
    budgets: tuple[BudgetUse, ...] = ()  # every budget's groups, nodes in use and limit

    def key(self) -> tuple[object, ...]:
        """A value equal for equal progress (the states mapping may be a live counter)."""
        soak = self.soak
        soak_key = (
            None
            if soak is None
            else (soak.canaries, soak.updated, soak.ends_at, soak.done, soak.awaited, soak.kept)
        )
        return (
            tuple(sorted(self.states.items())),
            self.updating,
            self.waiting,
            self.halt,
            self.halted_at,
            self.blocked,
            soak_key,
            self.durations,
            self.versions_seen,
            self.budgets,
        )


def policy_status(
    policy: EffectivePolicy,
    progress: FleetProgress,
    *,
    generation: int | None,
    now: datetime,
) -> UpdatePolicyStatus:
    """The status to show for `policy` (the one in force) given `progress` at `now`;
    `generation` is the policy object's `metadata.generation` as read."""
    facts = FleetFacts(
        now=now,
        paused=policy.paused,
        halt=progress.halt,
        blocked=progress.blocked,
        soak=progress.soak,
        updating=progress.updating,
        offered=progress.waiting,
    )
    phase, message = fleet_phase(facts)
    if policy.problem is not None:
        kept = (
            "the last good policy"
            if policy.source is PolicySource.LAST_GOOD
            else "the default behaviour"
        )
        message = f"The spec was not applied, {kept} stays in force: {policy.problem}"
    halt = progress.halt
    return UpdatePolicyStatus(
        phase=phase,
        message=printable(message, MESSAGE_MAX_LENGTH),  # no terminal controls from outside
        observed_generation=generation,
        halted_at=(progress.halted_at or now) if halt.halted else None,
        halt_reason=halt.cause.as_halt_reason() if halt.halted and halt.cause else None,
        failures=halt.failures,
        canary=_canary(progress.soak),
        nodes=_counts(progress.states),
        update_durations=progress.durations,
        expected_update_seconds=expected_update_seconds(progress.durations),
        versions_first_seen=progress.versions_seen,
        budgets_in_use=_budgets(progress.budgets),
    )


def _canary(soak: SoakProgress | None) -> CanaryProgress | None:
    """The canaries' progress; the nodes chosen by count are kept with their version (when
    the version fits the status: otherwise a restarted controller chooses again)."""
    if soak is None:
        return None
    version = soak.version if soak.version and len(soak.version) <= VERSION_MAX_LENGTH else None
    kept = tuple(n for n in soak.kept if len(n) <= NAME_MAX_LENGTH)[:CANARIES_KEPT]
    return CanaryProgress(
        nodes=soak.canaries,
        updated=soak.updated,
        soak_ends_at=soak.ends_at,
        version=version if kept else None,
        chosen=kept if version else (),
    )


def _budgets(budgets: tuple[BudgetUse, ...]) -> tuple[BudgetUseStatus, ...]:
    """The first BUDGET_GROUPS_MAX groups (the metric shows the same ones and counts the rest)."""
    return tuple(
        BudgetUseStatus(budget=u.budget, group=u.group, in_use=u.in_use, limit=u.limit)
        for u in budgets[:BUDGET_GROUPS_MAX]
    )


def _counts(states: Mapping[str, int]) -> NodeCounts:
    return NodeCounts(
        idle=states.get(UpdateState.IDLE.value, 0),
        staged_and_performed_update=states.get(UpdateState.STAGED_AND_PERFORMED_UPDATE.value, 0),
        rebooted_into_update=states.get(UpdateState.REBOOTED_INTO_UPDATE.value, 0),
        monitoring_update=states.get(UpdateState.MONITORING_UPDATE.value, 0),
        error_reset=states.get(UpdateState.ERROR_RESET.value, 0),
    )

"""The facts of one pass gathered for the safety rules, and the policy status written from them.

`rollout_target` names the rollout (the version the fleet is moving to), `node_counts` fills
the status' counts, and `policy_status` writes the whole `UpdatePolicyStatus`: phase and
message (fleet_phase), halt, failures, canary progress, node counts, observed generation.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from brupop.domain.canary import SoakProgress
from brupop.domain.fleet_phase import FleetFacts, fleet_phase
from brupop.domain.halt import HaltDecision
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.domain.update_policy_status import (
    MESSAGE_MAX_LENGTH,
    CanaryProgress,
    NodeCounts,
    UpdatePolicyStatus,
)
from brupop.domain.versions import compare_versions


def rollout_target(shadows: Iterable[Shadow]) -> str | None:
    """The highest version any agent is offered: the rollout the fleet is in (None when no
    agent has reported yet). Halt counting and the canaries' soak are per this version."""
    best: str | None = None
    for shadow in shadows:
        if shadow.status is None:
            continue
        offered = shadow.status.target_version
        if best is None or compare_versions(offered, best) > 0:
            best = offered
    return best


def node_counts(shadows: Iterable[Shadow]) -> NodeCounts:
    """Nodes by the state their agent last reported."""
    counts = dict.fromkeys(UpdateState, 0)
    for shadow in shadows:
        if shadow.status is not None:
            counts[shadow.status.current_state] += 1
    return NodeCounts(
        idle=counts[UpdateState.IDLE],
        staged_and_performed_update=counts[UpdateState.STAGED_AND_PERFORMED_UPDATE],
        rebooted_into_update=counts[UpdateState.REBOOTED_INTO_UPDATE],
        monitoring_update=counts[UpdateState.MONITORING_UPDATE],
        error_reset=counts[UpdateState.ERROR_RESET],
    )


def policy_status(
    facts: FleetFacts,
    shadows: Iterable[Shadow],
    *,
    generation: int | None,
    halted_at: datetime | None = None,
) -> UpdatePolicyStatus:
    """The status the leading controller writes on the `default` policy after a pass;
    `halted_at` is when the halt began (kept from the previous status while it lasts)."""
    phase, message = fleet_phase(facts)
    halt: HaltDecision = facts.halt
    return UpdatePolicyStatus(
        phase=phase,
        message=message[:MESSAGE_MAX_LENGTH],
        observed_generation=generation,
        halted_at=(halted_at or facts.now) if halt.halted else None,
        halt_reason=halt.cause.as_halt_reason() if halt.halted and halt.cause else None,
        failures=halt.failures,
        canary=_canary(facts.soak),
        nodes=node_counts(shadows),
    )


def _canary(soak: SoakProgress | None) -> CanaryProgress | None:
    if soak is None:
        return None
    return CanaryProgress(nodes=soak.canaries, updated=soak.updated, soak_ends_at=soak.ends_at)

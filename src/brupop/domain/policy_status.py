"""The status the controller writes on the `default` update policy: the rollout's phase, one
sentence about it, the generation it saw and the nodes by state. Pure: computed from what a
pass knows, so the controller can compare it with the status already written and write only
when something changed.

The halt, the failures counted and the canary progress belong to the gates and to `brupop
resume`; they are carried over from the status already written, untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from brupop.domain.effective_policy import EffectivePolicy, PolicySource
from brupop.domain.states import UpdateState
from brupop.domain.update_policy_status import (
    MESSAGE_MAX_LENGTH,
    NodeCounts,
    PolicyPhase,
    UpdatePolicyStatus,
)


@dataclass(frozen=True)
class FleetProgress:
    """How the rollout stands after a pass: nodes by reported state, nodes holding a slot,
    nodes that would start but wait (for a slot, the window or a pause)."""

    states: Mapping[str, int]
    updating: int
    waiting: int

    def key(self) -> tuple[object, ...]:
        """A value equal for equal progress (the states mapping may be a live counter)."""
        return (tuple(sorted(self.states.items())), self.updating, self.waiting)


def policy_status(
    policy: EffectivePolicy,
    progress: FleetProgress,
    *,
    generation: int | None,
    previous: UpdatePolicyStatus | None = None,
) -> UpdatePolicyStatus:
    """The status to show for `policy` (the one in force) given `progress`; `generation` is
    the policy object's `metadata.generation` as read."""
    phase, message = _phase(policy, progress)
    if policy.problem is not None:
        kept = (
            "the last good policy"
            if policy.source is PolicySource.LAST_GOOD
            else "the default behaviour"
        )
        message = f"The spec was not applied, {kept} stays in force: {policy.problem}"
    fields = {
        "phase": phase,
        "message": message[:MESSAGE_MAX_LENGTH],
        "observed_generation": generation,
        "nodes": _counts(progress.states),
    }
    if previous is None:
        return UpdatePolicyStatus.model_validate(fields)
    return previous.model_copy(update=fields)


def _phase(policy: EffectivePolicy, progress: FleetProgress) -> tuple[PolicyPhase, str]:
    updating, waiting = progress.updating, progress.waiting
    if policy.paused:
        finishing = (
            f"{_nodes(updating)} finishing {'its' if updating == 1 else 'their'} update"
            if updating
            else "no node is updating"
        )
        return PolicyPhase.PAUSED, f"Paused by spec.paused: no node starts, {finishing}."
    if updating or waiting:
        return PolicyPhase.ROLLING, f"{_nodes(updating)} updating, {waiting} waiting to start."
    return PolicyPhase.IDLE, "No node is updating or waiting to start."


def _nodes(count: int) -> str:
    return f"{count} node{'' if count == 1 else 's'}"


def _counts(states: Mapping[str, int]) -> NodeCounts:
    return NodeCounts(
        idle=states.get(UpdateState.IDLE.value, 0),
        staged_and_performed_update=states.get(UpdateState.STAGED_AND_PERFORMED_UPDATE.value, 0),
        rebooted_into_update=states.get(UpdateState.REBOOTED_INTO_UPDATE.value, 0),
        monitoring_update=states.get(UpdateState.MONITORING_UPDATE.value, 0),
        error_reset=states.get(UpdateState.ERROR_RESET.value, 0),
    )

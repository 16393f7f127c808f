"""The status the controller writes on the policy: phase, one sentence, generation, counts;
the halt and canary fields belong to others and are carried over untouched."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.domain.effective_policy import ENVIRONMENT_POLICY, EffectivePolicy, PolicySource
from brupop.domain.policy_status import FleetProgress, policy_status
from brupop.domain.update_policy_status import (
    HaltReason,
    NodeCounts,
    PolicyPhase,
    UpdatePolicyStatus,
)

PAUSED = EffectivePolicy(source=PolicySource.POLICY, paused=True, generation=4)
ROLLING = FleetProgress({"Idle": 3, "RebootedIntoUpdate": 1}, updating=1, waiting=2)


def test_a_paused_fleet_counts_the_nodes_finishing() -> None:
    status = policy_status(PAUSED, ROLLING, generation=4)
    assert status.phase is PolicyPhase.PAUSED
    assert status.message == "Paused by spec.paused: no node starts, 1 node finishing its update."
    assert status.observed_generation == 4
    assert status.nodes == NodeCounts(idle=3, rebooted_into_update=1)


def test_a_rolling_fleet_and_an_idle_one() -> None:
    rolling = policy_status(ENVIRONMENT_POLICY, ROLLING, generation=1)
    idle = policy_status(ENVIRONMENT_POLICY, FleetProgress({"Idle": 4}, 0, 0), generation=1)
    assert (rolling.phase, rolling.message) == (
        PolicyPhase.ROLLING,
        "1 node updating, 2 waiting to start.",
    )
    assert (idle.phase, idle.message) == (
        PolicyPhase.IDLE,
        "No node is updating or waiting to start.",
    )


def test_an_unusable_first_spec_says_the_default_behaviour_stays() -> None:
    policy = EffectivePolicy(problem="spec.canary.selector: unbalanced parentheses")
    status = policy_status(policy, ROLLING, generation=1)
    assert status.message == (
        "The spec was not applied, the default behaviour stays in force: "
        "spec.canary.selector: unbalanced parentheses"
    )


def test_the_halt_written_by_others_is_carried_over() -> None:
    halted_at = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    previous = UpdatePolicyStatus(
        halted_at=halted_at, halt_reason=HaltReason(node="node-a", check="nodeReady"), failures=2
    )
    status = policy_status(PAUSED, ROLLING, generation=4, previous=previous)
    assert (status.halted_at, status.halt_reason, status.failures) == (
        halted_at,
        previous.halt_reason,
        2,
    )
    assert status.phase is PolicyPhase.PAUSED

"""The rollout's target version, node counts, and the policy status written after a pass."""

from __future__ import annotations

from datetime import timedelta

from brupop.domain.canary import SoakProgress
from brupop.domain.fleet_phase import FleetFacts
from brupop.domain.fleet_status import node_counts, policy_status, rollout_target
from brupop.domain.halt import HaltDecision, NodeFailure
from brupop.domain.states import UpdateState
from brupop.domain.update_policy_status import PolicyPhase
from tests.unit.domain.controller_shadows import NEW, NOW, OLD, ago, shadow

FLEET = [
    shadow("a", target="1.20.10"),
    shadow("b", target="1.20.9", state=UpdateState.MONITORING_UPDATE),
    shadow("c", target=OLD, state=UpdateState.ERROR_RESET),
    shadow("d", state=None),
]


def test_the_rollout_is_to_the_highest_version_offered_by_semver() -> None:
    assert rollout_target(FLEET) == "1.20.10"
    assert rollout_target([shadow("d", state=None)]) is None


def test_node_counts_are_by_reported_state() -> None:
    counts = node_counts(FLEET)

    assert (counts.idle, counts.monitoring_update, counts.error_reset) == (1, 1, 1)
    assert counts.staged_and_performed_update == counts.rebooted_into_update == 0


def test_a_halted_status_names_node_check_and_keeps_when_it_began() -> None:
    cause = NodeFailure("b", "nodeReady", "the node is not Ready", ago(30))
    facts = FleetFacts(now=NOW, halt=HaltDecision(halted=True, cause=cause, failures=1))

    status = policy_status(facts, FLEET, generation=4, halted_at=ago(60))

    assert status.phase is PolicyPhase.HALTED
    assert status.halted_at == ago(60)
    assert status.halt_reason is not None and status.halt_reason.node == "b"
    assert status.halt_reason.check == "nodeReady"
    assert (status.failures, status.observed_generation) == (1, 4)
    assert status.message.startswith("Halted: ")


def test_a_soaking_status_carries_canary_progress_and_no_halt() -> None:
    soak = SoakProgress(canaries=2, updated=2, ends_at=NOW + timedelta(seconds=60), done=False)
    facts = FleetFacts(now=NOW, soak=soak, offered=3)

    status = policy_status(facts, [shadow("a", current=NEW)], generation=1)

    assert status.phase is PolicyPhase.SOAKING
    assert status.canary is not None
    assert (status.canary.nodes, status.canary.updated) == (2, 2)
    assert status.canary.soak_ends_at == NOW + timedelta(seconds=60)
    assert status.halted_at is None and status.halt_reason is None

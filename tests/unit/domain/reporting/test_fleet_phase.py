"""The fleet's phase and message, from the facts of a pass; the one to act on comes first."""

from __future__ import annotations

from datetime import timedelta

from brupop.domain.policy.update_policy_status import PolicyPhase
from brupop.domain.reporting.fleet_phase import FleetFacts, fleet_phase
from brupop.domain.safety.canary import SoakProgress
from brupop.domain.safety.halt import HaltDecision, NodeFailure
from tests.unit.domain.controller_shadows import NOW

HALT = HaltDecision(
    halted=True, cause=NodeFailure("n1", "nodeReady", "the node is not Ready", NOW), failures=1
)
SOAKING = SoakProgress(canaries=2, updated=2, ends_at=NOW + timedelta(seconds=90), done=False)
CANARIES_UPDATING = SoakProgress(canaries=2, updated=1, ends_at=None, done=False)
SOAKED = SoakProgress(canaries=2, updated=2, ends_at=NOW, done=True)


def test_nothing_to_do_is_idle() -> None:
    assert fleet_phase(FleetFacts(now=NOW)) == (
        PolicyPhase.IDLE,
        "Idle: every node runs the version it is offered.",
    )


def test_halted_outranks_everything_and_names_node_and_check() -> None:
    facts = FleetFacts(
        now=NOW, halt=HALT, paused=True, blocked="alert firing: X", soak=SOAKING, updating=1
    )

    phase, message = fleet_phase(facts)

    assert phase is PolicyPhase.HALTED
    assert "node n1 failed nodeReady: the node is not Ready" in message
    assert "1 node finishing the update in progress" in message


def test_paused_outranks_blocked_and_says_in_flight_nodes_finish() -> None:
    phase, message = fleet_phase(
        FleetFacts(now=NOW, paused=True, blocked="alert firing: X", updating=2, offered=3)
    )

    assert phase is PolicyPhase.PAUSED
    assert message == (
        "Paused: no node starts until `brupop resume`; 2 nodes finishing the update in progress."
    )


def test_a_firing_alert_blocks_while_nodes_want_to_update() -> None:
    blocked = FleetFacts(now=NOW, blocked="alert firing: NodeDown", offered=1)
    nobody_waits = FleetFacts(now=NOW, blocked="alert firing: NodeDown")

    assert fleet_phase(blocked) == (PolicyPhase.BLOCKED, "Blocked: alert firing: NodeDown.")
    assert fleet_phase(nobody_waits).phase is PolicyPhase.IDLE


def test_soaking_while_canaries_are_done_and_others_wait() -> None:
    phase, message = fleet_phase(FleetFacts(now=NOW, soak=SOAKING, offered=4))

    assert phase is PolicyPhase.SOAKING
    assert message == "Soaking: canaries soaking: 90 s left; 4 nodes wait for the soak."


def test_rolling_while_canaries_update_or_after_the_soak() -> None:
    during = fleet_phase(FleetFacts(now=NOW, soak=CANARIES_UPDATING, updating=1, offered=4))
    after = fleet_phase(FleetFacts(now=NOW, soak=SOAKED, updating=2, offered=1))

    assert during == (
        PolicyPhase.ROLLING,
        "Rolling: 1 node updating, 4 waiting; waiting for canaries: 1/2 updated.",
    )
    assert after == (PolicyPhase.ROLLING, "Rolling: 2 nodes updating, 1 waiting.")

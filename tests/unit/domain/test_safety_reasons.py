"""Waiting reasons of the rollout's safety rules, for nodes ready to start and nodes in the gate."""

from __future__ import annotations

from datetime import timedelta

from brupop.domain.canary import SoakProgress
from brupop.domain.halt import HaltDecision, NodeFailure
from brupop.domain.health_gate import CheckOutcome, CheckResult, GateCheck, decide_gate
from brupop.domain.safety_reasons import (
    NODE_PAUSED_LABEL,
    SafetyView,
    gate_hold,
    start_hold,
    startable,
)
from brupop.domain.waiting_reason import Reason
from tests.unit.domain.controller_shadows import NOW, ago

HALT = HaltDecision(halted=True, cause=NodeFailure("n1", "httpProbe", "503", NOW), failures=1)
SOAKING = SoakProgress(canaries=1, updated=1, ends_at=NOW + timedelta(seconds=30), done=False)


def test_nothing_holds_a_node_when_no_rule_applies() -> None:
    assert start_hold("n2", {}, SafetyView(now=NOW)) is None


def test_halted_fleet_holds_with_halted_reason() -> None:
    reason, detail = start_hold("n2", {}, SafetyView(now=NOW, halt=HALT, paused=True)) or ("", "")

    assert reason is Reason.HALTED
    assert detail.startswith("HALTED: ") and "node n1 failed httpProbe" in detail


def test_fleet_pause_and_node_label_both_hold_with_paused_reason() -> None:
    fleet = start_hold("n2", {}, SafetyView(now=NOW, paused=True))
    node = start_hold("n2", {NODE_PAUSED_LABEL: "true"}, SafetyView(now=NOW))

    assert fleet is not None and fleet[0] is Reason.PAUSED and "rollout is paused" in fleet[1]
    assert node is not None and node[0] is Reason.PAUSED and NODE_PAUSED_LABEL in node[1]
    assert start_hold("n2", {NODE_PAUSED_LABEL: "false"}, SafetyView(now=NOW)) is None


def test_alert_gate_holds_with_its_reason() -> None:
    held = start_hold("n2", {}, SafetyView(now=NOW, blocked="alert firing: NodeDown"))

    assert held == (Reason.ALERT_HOLD, "held by the alert gate: alert firing: NodeDown")


def test_soak_holds_non_canaries_only() -> None:
    view = SafetyView(now=NOW, canaries=frozenset({"c1"}), soak=SOAKING)

    assert start_hold("n2", {}, view) == (Reason.CANARY_SOAK, "canaries soaking: 30 s left")
    assert start_hold("c1", {}, view) is None
    assert startable(["c1", "n2", "n3"], {}, view) == ["c1"]


def test_gate_pending_reason_names_the_check_and_when_it_fails() -> None:
    pending = CheckResult(GateCheck.NODE_READY, CheckOutcome.PENDING, "the node is not Ready")
    waiting = decide_gate([pending], monitoring_since=ago(10), timeout_seconds=60, now=NOW)
    passed = decide_gate([], monitoring_since=ago(10), timeout_seconds=60, now=NOW)

    assert gate_hold(waiting) == (
        Reason.GATE_PENDING,
        "health gate waiting for nodeReady: the node is not Ready "
        f"(fails at {(ago(10) + timedelta(seconds=60)).isoformat()})",
    )
    assert gate_hold(passed) is None
    assert Reason.GATE_PENDING.is_waiting and Reason.PAUSED.is_waiting

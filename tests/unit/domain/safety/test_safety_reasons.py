"""The waiting reason of a node the health gate keeps in MonitoringUpdate."""

from __future__ import annotations

from datetime import timedelta

from brupop.domain.reason import Explanation, Reason
from brupop.domain.safety.health_gate import CheckOutcome, CheckResult, GateCheck, decide_gate
from brupop.domain.safety.safety_reasons import gate_hold
from tests.unit.domain.controller_shadows import NOW, ago


def test_gate_pending_reason_names_the_check_and_when_it_fails() -> None:
    pending = CheckResult(GateCheck.NODE_READY, CheckOutcome.PENDING, "the node is not Ready")
    waiting = decide_gate([pending], monitoring_since=ago(10), timeout_seconds=60, now=NOW)
    passed = decide_gate([], monitoring_since=ago(10), timeout_seconds=60, now=NOW)

    assert gate_hold(waiting) == Explanation(
        Reason.GATE_PENDING,
        "health gate waiting for nodeReady: the node is not Ready "
        f"(fails at {(ago(10) + timedelta(seconds=60)).isoformat()})",
    )
    assert gate_hold(passed) is None
    assert Reason.GATE_PENDING.is_waiting and Reason.PAUSED.is_waiting

"""The alert gate: which firing alerts hold, and what holding means for starts and the gate."""

from __future__ import annotations

from brupop.domain.policy.alert_matcher import parse_alert_matcher
from brupop.domain.safety.alert_gate import AlertGateState, FiringAlert, matching_alerts
from brupop.domain.safety.health_gate import CheckOutcome

DOWN = FiringAlert("NodeDown", {"alertname": "NodeDown", "severity": "critical"})
DISK = FiringAlert("DiskFull", {"alertname": "DiskFull", "severity": "warning"})
WATCHDOG = FiringAlert("Watchdog", {"alertname": "Watchdog", "severity": "none"})


def test_only_alerts_matching_every_matcher_and_not_ignored_hold() -> None:
    matchers = [parse_alert_matcher('severity=~"critical|none"')]

    held = matching_alerts([DOWN, DISK, WATCHDOG], matchers, ignore=["Watchdog"])

    assert held == (DOWN,)
    assert matching_alerts([DOWN, DISK], [], ignore=[]) == (DOWN, DISK)


def test_a_firing_alert_holds_starts_and_fails_a_finishing_node() -> None:
    state = AlertGateState(firing=(DOWN, DISK))

    assert state.holds
    assert state.reason == "alerts firing: DiskFull, NodeDown"
    assert state.as_check().outcome is CheckOutcome.FAILED


def test_an_unreachable_prometheus_holds_closed_and_keeps_a_node_waiting() -> None:
    state = AlertGateState(unreachable="connection refused")

    assert state.holds
    assert (
        state.reason == "Prometheus cannot be asked (connection refused); holding until it answers"
    )
    assert state.as_check().outcome is CheckOutcome.PENDING


def test_no_alert_releases() -> None:
    state = AlertGateState()

    assert not state.holds and state.reason is None
    assert state.as_check().outcome is CheckOutcome.PASSED


def test_many_alerts_are_named_a_few_then_counted() -> None:
    alerts = tuple(FiringAlert(f"A{i}") for i in range(5))

    assert AlertGateState(firing=alerts).reason == "alerts firing: A0, A1, A2 and 2 more"

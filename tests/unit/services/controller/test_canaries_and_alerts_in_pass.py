"""The controller's pass applies the policy's canaries and alert gate: canaries update first and
the others wait out the soak; while a matching alert fires (or Prometheus cannot be asked) no
node starts, and a node finishing while one fires fails its gate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brupop.domain.policy.alert_matcher import AlertMatcher
from brupop.domain.policy.update_policy_status import PolicyPhase
from brupop.domain.reason import Reason
from brupop.domain.safety.alert_gate import FiringAlert
from brupop.services.controller.safety.gate_reads import ALERT_READ_SECONDS
from tests.unit.services.controller.fleet import Fleet
from tests.unit.services.controller.passes import (
    events_of,
    policy_object,
    policy_status,
    reasons_by_node,
    report_row,
    run_passes,
    started_shadows,
)

PROMETHEUS = "http://prometheus.monitoring:9090"
SOAK = 20


def _alerting(**spec: Any) -> dict[str, Any]:
    gate = {"prometheusUrl": PROMETHEUS, "matchers": ['severity="critical"']}
    return policy_object(alertGate=gate, **spec)


CRITICAL = FiringAlert("NodeDown", {"alertname": "NodeDown", "severity": "critical"})


def test_the_canary_updates_first_and_the_others_wait_out_the_soak() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(policy_object(canary={"count": 1, "soakSeconds": SOAK}))
    controller = fleet.controller(3)

    run_passes(fleet, controller, 8)

    assert started_shadows(fleet) == ["brs-node-00"]
    assert reasons_by_node(controller)["node-01"] is Reason.CANARY_SOAK
    status = policy_status(fleet)
    assert status.phase is PolicyPhase.SOAKING
    assert status.canary is not None and (status.canary.nodes, status.canary.updated) == (1, 1)

    run_passes(fleet, controller, SOAK + 10)

    assert sorted(started_shadows(fleet)) == ["brs-node-00", "brs-node-01", "brs-node-02"]
    assert fleet.all_updated()


def test_canaries_chosen_by_selector_start_before_the_first_node_in_order() -> None:
    fleet = Fleet(3)
    fleet.cluster.nodes.set_labels("node-02", {"canary": "true"})
    fleet.cluster.policies.apply(
        policy_object(canary={"selector": "canary=true", "soakSeconds": 5})
    )
    controller = fleet.controller(3)

    run_passes(fleet, controller, 3)

    assert started_shadows(fleet) == ["brs-node-02"]


def test_a_canary_that_fails_its_gate_never_soaks_and_the_others_keep_waiting() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(
        policy_object(
            canary={"count": 1, "soakSeconds": 1},
            healthGate={"timeoutSeconds": 5},
            haltAfterFailures=2,
        )
    )
    fleet.cluster.set_node_ready("node-00", False)
    controller = fleet.controller(3)

    run_passes(fleet, controller, 30)

    assert started_shadows(fleet) == ["brs-node-00"]
    assert [e.shadow_name for e in events_of(fleet, "HealthGateFailed")] == ["brs-node-00"]
    assert reasons_by_node(controller)["node-01"] is Reason.CANARY_SOAK


def test_a_firing_alert_holds_every_start_and_its_resolution_releases_them() -> None:
    fleet = Fleet(2)
    fleet.alerts.serve(PROMETHEUS, CRITICAL)
    fleet.cluster.policies.apply(_alerting())
    controller = fleet.controller(2)

    run_passes(fleet, controller, 3)

    assert started_shadows(fleet) == []
    assert reasons_by_node(controller)["node-00"] is Reason.ALERT_HOLD
    status = policy_status(fleet)
    assert (status.phase, status.message) == (
        PolicyPhase.BLOCKED,
        "Blocked: alert firing: NodeDown.",
    )

    fleet.alerts.serve(PROMETHEUS)
    run_passes(fleet, controller, int(ALERT_READ_SECONDS) + 12)

    assert fleet.all_updated()


def test_an_alert_not_matching_or_ignored_does_not_hold() -> None:
    fleet = Fleet(1)
    warning = FiringAlert("DiskFilling", {"alertname": "DiskFilling", "severity": "warning"})
    fleet.alerts.serve(PROMETHEUS, warning, FiringAlert("Watchdog", {"severity": "critical"}))
    fleet.cluster.policies.apply(
        policy_object(
            alertGate={"prometheusUrl": PROMETHEUS, "ignore": ["Watchdog", "DiskFilling"]}
        )
    )
    controller = fleet.controller(1)

    run_passes(fleet, controller, 6)

    assert fleet.all_updated()


def test_an_unreachable_prometheus_holds_and_says_why() -> None:
    fleet = Fleet(1)
    fleet.alerts.fail(PROMETHEUS, "connection refused")
    fleet.cluster.policies.apply(_alerting())
    controller = fleet.controller(1)

    run_passes(fleet, controller, 3)

    assert started_shadows(fleet) == []
    row = report_row(controller, "node-00")
    assert row.reason is Reason.ALERT_HOLD
    assert "Prometheus cannot be asked" in row.detail and "connection refused" in row.detail


def test_a_node_finishing_while_an_alert_fires_fails_its_gate_on_the_alert() -> None:
    fleet = Fleet(2)
    fleet.alerts.serve(PROMETHEUS)
    fleet.cluster.policies.apply(_alerting(healthGate={"timeoutSeconds": 60}))
    fleet.cluster.set_node_ready("node-00", False)  # keeps it in the gate until the alert
    controller = fleet.controller(1)
    run_passes(fleet, controller, 6)
    assert reasons_by_node(controller)["node-00"] is Reason.GATE_PENDING

    fleet.alerts.serve(PROMETHEUS, CRITICAL)
    run_passes(fleet, controller, int(ALERT_READ_SECONDS) + 2)

    failed = events_of(fleet, "HealthGateFailed")
    assert [e.shadow_name for e in failed] == ["brs-node-00"]
    assert "alertGate" in failed[0].message
    halt = policy_status(fleet).halt_reason
    assert halt is not None and (halt.node, halt.check) == ("node-00", "alertGate")


class CountingAlertSource:
    """Counts how often Prometheus is asked."""

    def __init__(self) -> None:
        self.asked = 0

    def firing(
        self,
        source_url: str,
        matchers: Sequence[AlertMatcher],
        ignore: Sequence[str],
        timeout_seconds: float,
    ) -> tuple[FiringAlert, ...]:
        self.asked += 1
        return ()


def test_prometheus_is_asked_at_most_once_per_read_interval_however_many_passes() -> None:
    fleet = Fleet(1)
    source = CountingAlertSource()
    fleet.alerts = source  # type: ignore[assignment]
    fleet.cluster.policies.apply(_alerting())
    controller = fleet.controller(1)

    for _ in range(10):
        controller.tick()
    fleet.clock.advance(ALERT_READ_SECONDS)
    controller.tick()

    assert source.asked == 2

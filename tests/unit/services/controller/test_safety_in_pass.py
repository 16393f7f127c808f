"""The controller's pass applies the policy's health gate and halt: a node in MonitoringUpdate
goes Idle only once its checks pass, waits while one is pending, and fails on the gate's
timeout; enough failures halt the fleet (nothing starts, nothing stays cordoned) until
`brupop resume` clears the halt in the policy's status."""

from __future__ import annotations

from typing import Any

from brupop.domain.policy.update_policy_status import PolicyPhase
from brupop.domain.reason import Reason
from brupop.domain.safety.gate_checks import ProbeAnswer
from brupop.domain.states import UpdateState as S
from brupop.services.controller.safety.gate_reads import GATE_CHECKS_BUDGET_SECONDS
from brupop.services.pausing import FleetPause
from tests.unit.services.controller.fleet import NEW, Fleet, RecordingMetrics
from tests.unit.services.controller.passes import (
    events_of,
    policy_status,
    reasons_by_node,
    report_row,
    run_passes,
    started_shadows,
)

GATE_SECONDS = 30


def _gated(halt_after: int = 1, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "default"},
        "spec": {
            "healthGate": {"timeoutSeconds": GATE_SECONDS},
            "haltAfterFailures": halt_after,
        }
        | spec,
    }


def test_a_node_whose_checks_pass_goes_idle_and_the_next_one_starts() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_gated())
    metrics = RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)

    run_passes(fleet, controller, 12)

    assert fleet.all_updated()
    assert [e.shadow_name for e in events_of(fleet, "HealthGatePassed")] == [
        "brs-node-00",
        "brs-node-01",
    ]
    assert len(metrics.gate_seconds) == 2 and metrics.gate_failures == []
    assert policy_status(fleet).phase is PolicyPhase.IDLE


def test_a_node_whose_check_is_pending_stays_in_monitoring_and_holds_its_slot() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_gated())
    fleet.cluster.set_node_ready("node-00", False)
    controller = fleet.controller(1)

    run_passes(fleet, controller, 10)

    assert fleet.specs() == {"node-00": S.MONITORING_UPDATE, "node-01": S.IDLE}
    assert reasons_by_node(controller)["node-00"] is Reason.GATE_PENDING
    row = report_row(controller, "node-00")
    assert "health gate waiting for nodeReady: the node is not Ready" in row.detail

    fleet.cluster.set_node_ready("node-00", True)
    run_passes(fleet, controller, 8)

    assert fleet.all_updated()


def test_a_node_still_pending_at_the_gate_timeout_fails_and_halts_the_fleet() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(_gated())
    fleet.cluster.set_node_ready("node-00", False)
    metrics = RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)

    run_passes(fleet, controller, GATE_SECONDS + 20)

    failed = events_of(fleet, "HealthGateFailed")
    assert [e.shadow_name for e in failed] == ["brs-node-00"]
    assert "health gate failed on nodeReady" in failed[0].message
    assert set(started_shadows(fleet)) == {"brs-node-00"}, "no node starts after the failure"
    node_00 = fleet.shadow("node-00")
    assert node_00.spec.state is S.IDLE and node_00.status is not None
    assert (node_00.status.current_version, node_00.status.current_state) == (NEW, S.IDLE)
    status = policy_status(fleet)
    assert status.phase is PolicyPhase.HALTED
    assert status.halt_reason is not None
    assert (status.halt_reason.node, status.halt_reason.check) == ("node-00", "nodeReady")
    assert status.halted_at is not None and status.failures == 1
    assert reasons_by_node(controller)["node-01"] is Reason.HALTED
    halted = report_row(controller, "node-01").detail
    assert halted.startswith("fleet halted after 1 failed node(s)"), "said once, not HALTED: halted"
    row = report_row(controller, "node-00")
    assert "health gate failed on nodeReady" in row.detail, "its REASON says why"
    assert metrics.fleet_halted is True
    assert metrics.gate_failures == ["nodeReady"]
    assert ("health_gate", "MonitoringUpdate") in metrics.failures
    assert not any(n.unschedulable for n in fleet.cluster.nodes.list().items)


def test_the_bootstrap_allowance_keeps_a_pending_node_waiting_past_the_gate_timeout() -> None:
    fleet = Fleet(2)
    policy = _gated()
    policy["spec"]["healthGate"]["bootstrapAllowanceSeconds"] = 60
    fleet.cluster.policies.apply(policy)
    fleet.cluster.set_node_ready("node-00", False)
    controller = fleet.controller(1)

    run_passes(fleet, controller, GATE_SECONDS + 20)  # past timeoutSeconds, within the allowance

    assert events_of(fleet, "HealthGateFailed") == []
    assert reasons_by_node(controller)["node-00"] is Reason.GATE_PENDING
    fleet.cluster.set_node_ready("node-00", True)  # the bootstrap commands are done
    run_passes(fleet, controller, 8)
    assert fleet.all_updated()


def test_a_gate_failure_below_the_threshold_lets_the_rollout_go_on() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(_gated(halt_after=2))
    fleet.cluster.set_node_ready("node-00", False)
    controller = fleet.controller(1)

    run_passes(fleet, controller, GATE_SECONDS + 30)

    assert set(started_shadows(fleet)) == {"brs-node-00", "brs-node-01", "brs-node-02"}
    status = policy_status(fleet)
    assert (status.phase, status.failures) == (PolicyPhase.IDLE, 1)


def test_an_update_ending_in_error_reset_counts_toward_the_halt() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(_gated())
    controller = fleet.controller(1)
    controller.tick()
    fleet.fail("node-00")

    run_passes(fleet, controller, 10)

    status = policy_status(fleet)
    assert status.phase is PolicyPhase.HALTED
    assert status.halt_reason is not None
    assert (status.halt_reason.node, status.halt_reason.check) == ("node-00", "errorReset")
    assert set(started_shadows(fleet)) == {"brs-node-00"}


def test_resume_releases_the_halt_and_the_next_node_starts() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(_gated())
    fleet.cluster.set_node_ready("node-00", False)
    controller = fleet.controller(1)
    run_passes(fleet, controller, GATE_SECONDS + 10)
    assert policy_status(fleet).phase is PolicyPhase.HALTED

    change = FleetPause(fleet.cluster.policies).resume()
    run_passes(fleet, controller, 3)

    assert change.halt_cleared
    assert "brs-node-01" in set(started_shadows(fleet))
    assert policy_status(fleet).phase is PolicyPhase.ROLLING
    assert policy_status(fleet).halted_at is None


def test_a_new_leader_takes_over_the_halt_recorded_in_the_status() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(_gated())
    fleet.cluster.set_node_ready("node-00", False)
    first = fleet.controller(1)
    run_passes(fleet, first, GATE_SECONDS + 10)
    first.elector.release()

    second = fleet.controller(1)
    run_passes(fleet, second, 5)

    assert set(started_shadows(fleet)) == {"brs-node-00"}
    assert policy_status(fleet).phase is PolicyPhase.HALTED
    assert reasons_by_node(second)["node-01"] is Reason.HALTED


def test_without_a_health_gate_a_not_ready_node_finishes_as_before() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply({"metadata": {"name": "default"}, "spec": {}})
    fleet.cluster.set_node_ready("node-00", False)
    controller = fleet.controller(1)

    run_passes(fleet, controller, 12)

    assert fleet.all_updated()
    assert events_of(fleet, "HealthGatePassed") == []


def test_deleting_the_policy_releases_a_halt() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_gated())
    fleet.cluster.set_node_ready("node-00", False)
    controller = fleet.controller(1)
    run_passes(fleet, controller, GATE_SECONDS + 10)
    assert set(started_shadows(fleet)) == {"brs-node-00"}

    fleet.cluster.policies.delete("default")
    run_passes(fleet, controller, 3)

    assert "brs-node-01" in set(started_shadows(fleet))


class SlowProber:
    """Every probe answers 200 after `seconds` on the fleet's clock."""

    def __init__(self, fleet: Fleet, seconds: float) -> None:
        self._fleet = fleet
        self._seconds = seconds
        self.probed: list[str] = []
        self.timeouts: list[float] = []

    def probe(self, url: str, timeout_seconds: float) -> ProbeAnswer:
        self._fleet.clock.advance(self._seconds)
        self.probed.append(url)
        self.timeouts.append(timeout_seconds)
        return ProbeAnswer(status=200)


def test_checks_past_the_pass_budget_wait_for_the_next_pass_which_starts_with_them() -> None:
    fleet = Fleet(3)
    prober = SlowProber(fleet, GATE_CHECKS_BUDGET_SECONDS * 0.6)
    fleet.prober = prober  # type: ignore[assignment]
    probe = {"url": "http://{node_name}:10256/healthz"}
    gate = {"timeoutSeconds": 600, "requireNodeReady": False, "httpProbes": [probe]}
    fleet.cluster.policies.apply(_gated(healthGate=gate))
    controller = fleet.controller(3)
    for _ in range(3):  # all three reach MonitoringUpdate together
        controller.tick()
        fleet.step_all()
    assert set(fleet.specs().values()) == {S.MONITORING_UPDATE}

    controller.tick()
    first_pass = list(prober.probed)
    controller.tick()

    assert first_pass == ["http://node-00:10256/healthz", "http://node-01:10256/healthz"]
    assert prober.probed[2:] == ["http://node-02:10256/healthz"]
    assert fleet.specs()["node-02"] is S.IDLE


def test_no_probe_is_given_longer_than_the_pass_budget_left() -> None:
    fleet = Fleet(1)
    prober = SlowProber(fleet, 0)
    fleet.prober = prober  # type: ignore[assignment]
    probe = {"url": "http://{node_name}:10256/healthz", "timeoutSeconds": 60}
    gate = {"timeoutSeconds": 600, "requireNodeReady": False, "httpProbes": [probe]}
    fleet.cluster.policies.apply(_gated(healthGate=gate))
    controller = fleet.controller(1)

    run_passes(fleet, controller, 5)

    assert prober.timeouts and max(prober.timeouts) <= GATE_CHECKS_BUDGET_SECONDS
    assert fleet.all_updated()


def test_a_resume_holds_when_the_replica_that_saw_the_failure_as_follower_takes_over() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(_gated())
    first, second = fleet.controller(1), fleet.controller(1)
    first.tick()
    second.tick()
    fleet.fail("node-00")
    second.tick()  # the follower sees the failure before the leader's Halted status
    first.tick()
    second.tick()
    assert policy_status(fleet).phase is PolicyPhase.HALTED

    FleetPause(fleet.cluster.policies).resume()
    first.tick()
    second.tick()
    first.elector.release()
    fleet.clock.advance(30)  # past the Lease the follower last saw
    for _ in range(3):
        second.tick()
        fleet.step_all()

    assert second.elector.is_leader()
    assert policy_status(fleet).phase is not PolicyPhase.HALTED
    assert "brs-node-01" in set(started_shadows(fleet))

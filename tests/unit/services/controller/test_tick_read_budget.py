"""A tick's passes share one budget for Prometheus and the probes: a write that met a conflict
asks for another pass at once, and that pass must not probe again (three passes of a full
budget each would outlast the Lease). On the fleet's fake clock: a probe costs its time."""

from __future__ import annotations

from typing import Any

from brupop.domain.safety.gate_checks import ProbeAnswer
from brupop.domain.shadow import Shadow, ShadowSpec, shadow_name
from brupop.domain.states import UpdateState as S
from brupop.services.controller.safety.gate_reads import GATE_CHECKS_BUDGET_SECONDS
from brupop.services.controller.service import ControllerService
from tests.unit.services.controller.fleet import Fleet

PROBE = "http://{node_name}:10256/healthz"


class CostlyProber:
    """Every probe takes `seconds` of the fleet's clock and answers 503 (the gate waits)."""

    def __init__(self, fleet: Fleet, seconds: float) -> None:
        self._fleet = fleet
        self._seconds = seconds
        self.probed: list[str] = []

    def probe(self, url: str, timeout_seconds: float) -> ProbeAnswer:
        self._fleet.clock.advance(min(self._seconds, timeout_seconds))
        self.probed.append(url)
        return ProbeAnswer(status=503)


def _gate(probes: int = 1) -> dict[str, Any]:
    gate = {
        "timeoutSeconds": 600,
        "requireNodeReady": False,
        "httpProbes": [{"url": f"{PROBE}/{i}", "timeoutSeconds": 60} for i in range(probes)],
    }
    return {"metadata": {"name": "default"}, "spec": {"healthGate": gate}}


def _node_in_its_gate(fleet: Fleet, controller: ControllerService) -> None:
    for _ in range(3):  # started, rebooted, monitored
        controller.tick()
        fleet.step_all()
    assert fleet.specs()["node-00"] is S.MONITORING_UPDATE


def _detail(controller: ControllerService, node: str) -> str:
    return next(row.detail for row in controller.reports() if row.node == node)


def _every_start_of(fleet: Fleet, node: str) -> list[str]:
    """Make every spec write to `node` conflict (its agent reports just before it); the
    attempts, one per pass."""
    shadows = fleet.cluster.shadows
    original = shadows.replace_spec
    attempts: list[str] = []

    def raced(name: str, spec: ShadowSpec, resource_version: str | None) -> Shadow:
        if name == shadow_name(node):
            attempts.append(str(spec.state))
            status = shadows.get(name).status
            assert status is not None
            shadows.update_status(name, status)  # a newer resourceVersion: the write conflicts
        return original(name, spec, resource_version)

    shadows.replace_spec = raced  # type: ignore[method-assign]
    return attempts


def test_the_passes_of_one_tick_probe_a_node_once_and_fit_in_one_budget() -> None:
    fleet = Fleet(1)
    prober = CostlyProber(fleet, GATE_CHECKS_BUDGET_SECONDS * 0.4)
    fleet.prober = prober  # type: ignore[assignment]
    fleet.cluster.policies.apply(_gate())
    controller = fleet.controller(2)
    _node_in_its_gate(fleet, controller)
    fleet.add_node("node-01")
    attempts = _every_start_of(fleet, "node-01")
    probed_before, started = len(prober.probed), fleet.clock.monotonic()

    controller.tick()

    assert len(attempts) == 3, "three passes: each start met a conflict"
    assert prober.probed[probed_before:] == ["http://node-00:10256/healthz/0"]
    assert fleet.clock.monotonic() - started <= GATE_CHECKS_BUDGET_SECONDS
    assert "answered 503" in _detail(controller, "node-00")


def test_probes_past_the_tick_budget_wait_for_the_next_tick_whatever_the_passes() -> None:
    fleet = Fleet(1)
    prober = CostlyProber(fleet, GATE_CHECKS_BUDGET_SECONDS * 0.4)
    fleet.prober = prober  # type: ignore[assignment]
    fleet.cluster.policies.apply(_gate(probes=4))
    controller = fleet.controller(2)
    _node_in_its_gate(fleet, controller)
    fleet.add_node("node-01")
    attempts = _every_start_of(fleet, "node-01")
    probed_before, started = len(prober.probed), fleet.clock.monotonic()

    controller.tick()

    assert len(attempts) == 3
    # Three probes of 0.4 budgets: the third gets only what is left, the fourth waits.
    assert len(prober.probed) - probed_before == 3
    assert fleet.clock.monotonic() - started <= GATE_CHECKS_BUDGET_SECONDS

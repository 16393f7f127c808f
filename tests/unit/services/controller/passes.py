"""Controller passes over a scripted `Fleet`, and what they did: the steps the controller's unit
tests share (one copy here, not one per test file)."""

from __future__ import annotations

from typing import Any

from brupop.domain.cluster.objects import ClusterEvent
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.reason import Explanation, Reason
from brupop.domain.reporting.waiting_reason import NodeReport
from brupop.services.controller.service import ControllerService
from tests.unit.services.controller.fleet import Fleet


def policy_object(**spec: Any) -> dict[str, Any]:
    """The `default` update policy object with this spec."""
    return {"metadata": {"name": "default"}, "spec": spec}


def run_passes(
    fleet: Fleet, controller: ControllerService, passes: int, seconds: float = 1
) -> None:
    """`passes` passes; after each, every agent takes its step and `seconds` go by."""
    for _ in range(passes):
        controller.tick()
        fleet.step_all()
        fleet.clock.advance(seconds)


def events_of(fleet: Fleet, reason: str) -> list[ClusterEvent]:
    """The Events recorded with this reason, oldest first."""
    return [e for e in fleet.cluster.events.recorded if e.reason == reason]


def started_shadows(fleet: Fleet) -> list[str]:
    """The shadows the controller started, in the order it started them."""
    return [e.shadow_name for e in events_of(fleet, "UpdateStarted")]


def policy_status(fleet: Fleet) -> UpdatePolicyStatus:
    """The status the controller wrote on the `default` update policy."""
    status = fleet.cluster.policies.store.get(f"{fleet.cluster.namespace}/default").status
    assert status is not None
    return status


def reasons_by_node(controller: ControllerService) -> dict[str, Reason]:
    """Each node's REASON code."""
    return {row.node: row.reason for row in controller.reports()}


def explanations_by_node(controller: ControllerService) -> dict[str, Explanation]:
    """Each node's REASON code and sentence."""
    return {row.node: Explanation(row.reason, row.detail) for row in controller.reports()}


def report_row(controller: ControllerService, node: str) -> NodeReport:
    """The `brupop status` row of one node."""
    return next(r for r in controller.reports() if r.node == node)


def explanation_of(controller: ControllerService, node: str) -> Explanation:
    """One node's REASON code and sentence."""
    row = report_row(controller, node)
    return Explanation(row.reason, row.detail)

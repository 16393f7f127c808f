"""Canaries when agents report late: a node whose first report comes after the rollout began
joins the canaries until the policy's count is met, the others wait until that many have
soaked, and when fewer nodes can be canaries than asked the policy's status says so."""

from __future__ import annotations

from datetime import datetime

from brupop.domain.policy.update_policy_status import PolicyPhase
from brupop.domain.reason import Reason
from brupop.domain.states import UpdateState
from tests.unit.services.controller.fleet import NEW, Fleet
from tests.unit.services.controller.passes import (
    explanation_of,
    policy_object,
    policy_status,
    run_passes,
    started_shadows,
)

SOAK = 20
LATE_SECONDS = 15
LATE = ("node-01", "node-02", "node-03")


def _idle_on_new(fleet: Fleet, node: str) -> bool:
    shadow = fleet.shadow(node)
    status = shadow.status
    return (
        status is not None
        and status.current_version == NEW
        and status.current_state is UpdateState.IDLE
        and shadow.spec.state is UpdateState.IDLE
    )


def test_a_node_reporting_15_s_late_joins_the_canaries_and_the_rest_wait_for_both_to_soak() -> None:
    fleet = Fleet(4, unreported=LATE)
    fleet.cluster.policies.apply(policy_object(canary={"count": 2, "soakSeconds": SOAK}))
    controller = fleet.controller(3)
    began = fleet.clock.now()
    started_at: dict[str, datetime] = {}
    finished_at: dict[str, datetime] = {}

    for _ in range(120):
        now = fleet.clock.now()
        if (now - began).total_seconds() >= LATE_SECONDS:
            for name in LATE:
                if fleet.shadow(name).status is None:
                    fleet.first_report(name)
        controller.tick()
        for shadow in started_shadows(fleet):
            started_at.setdefault(shadow.removeprefix("brs-"), now)
        fleet.step_all()
        for name in started_at:
            if name not in finished_at and _idle_on_new(fleet, name):
                finished_at[name] = now
        fleet.clock.advance(1)

    assert fleet.all_updated()
    order = sorted(started_at, key=lambda name: (started_at[name], name))
    canaries, others = order[:2], order[2:]
    assert canaries == ["node-00", "node-01"], started_at
    soaked_at = max(finished_at[name] for name in canaries)
    for name in others:
        waited = (started_at[name] - soaked_at).total_seconds()
        assert waited >= SOAK, (name, started_at, finished_at)


def test_while_a_canary_by_selector_has_not_reported_the_others_wait_and_say_why() -> None:
    fleet = Fleet(3, unreported=("node-01",))
    for name in ("node-00", "node-01"):
        fleet.cluster.nodes.set_labels(name, {"canary": "true"})
    fleet.cluster.policies.apply(
        policy_object(canary={"selector": "canary=true", "soakSeconds": 1})
    )
    controller = fleet.controller(3)

    run_passes(fleet, controller, 12)  # node-00 updates, and would have soaked long ago

    assert started_shadows(fleet) == ["brs-node-00"]
    reason = explanation_of(controller, "node-02")
    assert reason.reason is Reason.CANARY_SOAK
    assert "1/1 updated, 1 more to choose when its node reports" in reason.detail, reason
    assert policy_status(fleet).phase is not PolicyPhase.SOAKING

    fleet.first_report("node-01")
    run_passes(fleet, controller, 3)

    assert started_shadows(fleet) == ["brs-node-00", "brs-node-01"]

    run_passes(fleet, controller, 12)

    assert started_shadows(fleet)[2:] == ["brs-node-02"]
    assert fleet.all_updated()


def test_fewer_nodes_to_update_than_canaries_asked_are_all_canaries_and_the_status_says_so() -> (
    None
):
    fleet = Fleet(1)
    fleet.add_node("node-01", current=NEW, target=NEW)
    fleet.cluster.policies.apply(policy_object(canary={"count": 2, "soakSeconds": 1}))
    controller = fleet.controller(3)

    controller.tick()

    assert started_shadows(fleet) == ["brs-node-00"]
    status = policy_status(fleet)
    assert "(2 canaries asked, 1 node matches)" in status.message, status.message


def test_a_restarted_controller_keeps_the_canaries_and_the_others_still_wait_out_the_soak() -> None:
    fleet = Fleet(4)
    fleet.cluster.policies.apply(policy_object(canary={"count": 2, "soakSeconds": 60}))
    first = fleet.controller(4)
    run_passes(fleet, first, 8)  # both canaries updated; their soak has begun
    assert sorted(started_shadows(fleet)) == ["brs-node-00", "brs-node-01"]
    canary = policy_status(fleet).canary
    assert canary is not None and canary.chosen == ("node-00", "node-01")

    restarted = fleet.controller(4)  # a new replica; it leads once the old Lease expires
    restarted.tick()
    fleet.clock.advance(16)
    run_passes(fleet, restarted, 10)

    # Chosen again among the nodes left, node-02 and node-03 would start at once as canaries.
    assert sorted(started_shadows(fleet)) == ["brs-node-00", "brs-node-01"]
    assert explanation_of(restarted, "node-02").reason is Reason.CANARY_SOAK

    run_passes(fleet, restarted, 70)

    assert fleet.all_updated()

"""The controller's pass chooses its starts through the policy's start rules: a budget per
node group, the policy's global `maxConcurrent`, the start order; held nodes name their hold
in REASON, and the budgets in use show in the metric and the policy's status."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from brupop.domain.capacity.fleet_census import FleetCensus
from brupop.domain.policy.update_policy_status import BudgetUseStatus
from brupop.domain.reason import Reason
from brupop.domain.shadow import shadow_name
from brupop.ports.errors import PortError
from brupop.services.controller.mirrors.pod_census import PodCensus
from brupop.services.controller.service import ControllerService
from brupop.services.controller.starts.start_rules import CHOICE_REUSE
from tests.unit.services.controller.fleet import Fleet, RecordingMetrics
from tests.unit.services.controller.passes import (
    explanations_by_node,
    policy_object,
    policy_status,
    started_shadows,
)

ZONE = "topology.kubernetes.io/zone"
ZONES = {"node-00": "a", "node-01": "a", "node-02": "b", "node-03": "b", "node-04": "c"}


def _zoned_fleet() -> Fleet:
    fleet = Fleet(len(ZONES))
    for node, zone in ZONES.items():
        fleet.cluster.nodes.set_labels(node, {ZONE: zone})
    return fleet


def test_a_zone_budget_of_one_starts_one_node_per_zone() -> None:
    fleet = _zoned_fleet()
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": 1}]))
    controller = fleet.controller(limit=5)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name(n) for n in ("node-00", "node-02", "node-04")]


def test_a_node_held_by_its_budget_names_the_budget_in_reason() -> None:
    fleet = _zoned_fleet()
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": 1}]))
    controller = fleet.controller(limit=5)
    controller.tick()
    assert explanations_by_node(controller)["node-01"] == (
        Reason.BUDGET_FULL,
        "zone a at 1/1; 1.20.0 offered",
    )


def test_budgets_in_use_show_in_the_metric_and_the_policy_status() -> None:
    fleet = _zoned_fleet()
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": "50%"}]))
    metrics = RecordingMetrics()
    controller = fleet.controller(limit=5, metrics=metrics)
    controller.tick()
    assert metrics.budgets == {(ZONE, "a"): 1, (ZONE, "b"): 1, (ZONE, "c"): 1}
    assert policy_status(fleet).budgets_in_use == (
        BudgetUseStatus(budget=ZONE, group="a", in_use=1, limit=1),
        BudgetUseStatus(budget=ZONE, group="b", in_use=1, limit=1),
        BudgetUseStatus(budget=ZONE, group="c", in_use=1, limit=1),
    )
    assert metrics.waiting["budget_full"] == 2


def test_nodes_without_the_label_share_a_budget_group_of_their_own() -> None:
    fleet = Fleet(3)
    fleet.cluster.nodes.set_labels("node-00", {ZONE: "a"})
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": 1}]))
    controller = fleet.controller(limit=5)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-00"), shadow_name("node-01")]
    reason, detail = explanations_by_node(controller)["node-02"]
    assert (reason, detail) == (
        Reason.BUDGET_FULL,
        "zone (no topology.kubernetes.io/zone) at 1/1; 1.20.0 offered",
    )


def test_a_budget_applied_after_the_nodes_were_mirrored_reads_their_labels() -> None:
    fleet = _zoned_fleet()
    fleet.cluster.policies.apply(policy_object(paused=True))
    controller = fleet.controller(limit=5)
    controller.tick()
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": 1}]))
    controller.tick()
    assert len(started_shadows(fleet)) == 3


def test_a_node_moving_to_another_group_changes_that_groups_size() -> None:
    fleet = _zoned_fleet()
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": "75%"}]))
    controller = fleet.controller(limit=5)
    controller.tick()
    assert len(started_shadows(fleet)) == 3  # one per group: 75% of 2 rounds down to 1
    fleet.cluster.nodes.set_labels("node-03", {ZONE: "a"})  # a has 3 nodes now: 2 may update
    controller.tick()
    assert started_shadows(fleet)[3:] == [shadow_name("node-01")]


def test_the_policys_max_concurrent_overrides_the_environments_limit() -> None:
    fleet = Fleet(4)
    fleet.cluster.policies.apply(policy_object(maxConcurrent=3))
    controller = fleet.controller(limit=1)
    controller.tick()
    assert len(started_shadows(fleet)) == 3
    assert explanations_by_node(controller)["node-03"].detail.startswith(
        "concurrency full (3/3 nodes updating)"
    )


def test_a_percentage_limit_is_of_the_opted_in_nodes_rounded_down() -> None:
    fleet = Fleet(5)
    fleet.cluster.policies.apply(policy_object(maxConcurrent="50%"))
    controller = fleet.controller(limit=5)
    controller.tick()
    assert len(started_shadows(fleet)) == 2


def test_without_max_concurrent_the_environments_limit_stays() -> None:
    fleet = Fleet(4)
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": 4}]))
    controller = fleet.controller(limit=2)
    controller.tick()
    assert len(started_shadows(fleet)) == 2


def test_cheapest_first_is_the_order_without_a_policy_object() -> None:
    fleet = Fleet(4)
    _with_pods(fleet, {"node-00": 5, "node-01": 3, "node-03": 3})
    controller = fleet.controller(limit=2)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-02"), shadow_name("node-01")]


def test_order_name_starts_by_name_whatever_the_costs() -> None:
    fleet = Fleet(4)
    fleet.cluster.policies.apply(policy_object(order="name", capacityCheck=False))
    _with_pods(fleet, {"node-00": 5, "node-01": 3, "node-03": 3})
    controller = fleet.controller(limit=2)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-00"), shadow_name("node-01")]


def test_a_hold_that_goes_leaves_the_waiting_counts_and_the_reasons_alike() -> None:
    fleet = _zoned_fleet()
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": 1}]))
    metrics = RecordingMetrics()
    controller = fleet.controller(limit=3, metrics=metrics)
    controller.tick()
    assert metrics.waiting["budget_full"] == 2
    fleet.cluster.policies.apply(policy_object())
    controller.tick()
    rows = explanations_by_node(controller)
    assert rows["node-01"][0] is Reason.CONCURRENCY_FULL
    assert metrics.waiting["budget_full"] == 0
    assert metrics.waiting["concurrency_full"] == 2


def _with_pods(fleet: Fleet, pods: Mapping[str, int]) -> None:
    for node, count in pods.items():
        for index in range(count):
            fleet.cluster.add_pod("default", f"{node}-web-{index}", node, labels={"app": "web"})


def test_cheapest_first_reads_the_pods_a_drain_would_evict_from_the_cluster() -> None:
    fleet = Fleet(4)
    _with_pods(fleet, {"node-00": 2, "node-01": 1, "node-03": 1})
    controller = fleet.controller(limit=2)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-02"), shadow_name("node-01")]


def test_a_pod_behind_a_disruption_budget_weighs_double_in_the_order() -> None:
    fleet = Fleet(3)
    fleet.cluster.add_pod("default", "db-0", "node-00", labels={"app": "db"})
    fleet.cluster.add_disruption_budget("default", "db", {"app": "db"}, min_available=1)
    _with_pods(fleet, {"node-01": 1, "node-02": 2})
    controller = fleet.controller(limit=1)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-01")]  # node-00 and node-02 cost 2


def test_while_the_pods_cannot_be_listed_the_order_is_by_name() -> None:
    fleet = Fleet(3)
    _with_pods(fleet, {"node-00": 3})

    def unreachable() -> list[Any]:
        raise PortError("the apiserver cannot be reached")

    fleet.cluster.pods.list_all = unreachable  # type: ignore[method-assign]
    controller = fleet.controller(limit=1)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-00")]


class CountedCensus(FleetCensus):
    """A census that counts how often a node's cost is asked (in `asked`)."""

    asked: list[str]

    def cost(self, node_name: str) -> int:
        self.asked.append(node_name)
        return super().cost(node_name)


class CountingCensus(PodCensus):
    """The cluster's census, each one taken counting the costs asked of it."""

    def __init__(self, fleet: Fleet) -> None:
        super().__init__(fleet.cluster.pods, fleet.cluster.nodes)
        self.asked: list[str] = []
        self._counted: dict[int, CountedCensus] = {}

    def snapshot(self, now: datetime) -> FleetCensus:
        taken = super().snapshot(now)
        if id(taken) not in self._counted:  # the same census, the same object (see RoomKey)
            fields = {f.name: getattr(taken, f.name) for f in dataclasses.fields(taken)}
            counted = CountedCensus(**fields)
            object.__setattr__(counted, "asked", self.asked)
            self._counted = {id(taken): counted}
        return self._counted[id(taken)]


def _counting(fleet: Fleet, limit: int) -> tuple[ControllerService, CountingCensus]:
    """A replica whose census counts the costs asked of it."""
    census = CountingCensus(fleet)
    container = fleet.container(limit=limit)
    container.pod_census.override(census)
    return container.service(), census


def test_a_fleet_held_by_its_budgets_is_not_tried_again_when_nothing_changed() -> None:
    fleet = _zoned_fleet()
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": 1}]))
    controller, costs = _counting(fleet, limit=5)
    controller.tick()  # starts one node per zone
    controller.tick()  # the two left are tried: their zones are full
    asked = len(costs.asked)
    controller.tick()
    assert (asked, len(costs.asked)) == (len(ZONES) + 2, len(ZONES) + 2)
    assert explanations_by_node(controller)["node-01"].reason is Reason.BUDGET_FULL


def test_a_reused_choice_is_tried_again_once_it_is_ten_seconds_old() -> None:
    fleet = _zoned_fleet()
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": 1}]))
    controller, costs = _counting(fleet, limit=5)
    controller.tick()
    controller.tick()
    asked = len(costs.asked)
    fleet.clock.advance(CHOICE_REUSE.total_seconds())
    controller.tick()
    assert len(costs.asked) > asked

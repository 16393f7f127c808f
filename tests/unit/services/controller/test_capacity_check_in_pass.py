"""The controller's capacity check: a node starts only when the pods its drain would evict fit
on the other schedulable nodes (CPU and memory requests against allocatable), counting the
nodes already updating and those started in the same pass; a held node names the shortfall
in REASON. The census it reads (all Nodes, pods and budgets) also gives the cheapest-first
order its costs, and is listed only by a pass that can start a node."""

from __future__ import annotations

import dataclasses

from brupop.adapters.memory.pods import InMemoryPodRepository
from brupop.domain.cluster.objects import Pod, PodDisruptionBudget
from brupop.domain.cluster.resources import Resources
from brupop.domain.reason import Reason
from brupop.domain.shadow import shadow_name
from brupop.domain.states import UpdateState
from brupop.ports.errors import PortError
from brupop.services.controller.mirrors.pod_census import PodCensus
from tests.unit.services.controller.fleet import Fleet
from tests.unit.services.controller.passes import (
    explanations_by_node,
    policy_object,
    started_shadows,
)

GI = 1 << 30


def _sized(fleet: Fleet, node: str, cpu_millis: int) -> None:
    """Give `node` this much allocatable CPU (and 8 Gi of memory)."""
    room = Resources(cpu_millis, 8 * GI)
    fleet.cluster.nodes.store.update(node, lambda n: dataclasses.replace(n, allocatable=room))


def _pod(fleet: Fleet, node: str, name: str, cpu_millis: int) -> None:
    fleet.cluster.add_pod("default", name, node, requests=Resources(cpu_millis, GI))


def _full_nodes_and_a_spare(pods: dict[str, int], spare_millis: int) -> Fleet:
    """Opted-in nodes each running one pod that fills it, and one node (not opted in) with
    `spare_millis` of CPU free: the only room the evicted pods may go to."""
    fleet = Fleet(len(pods))
    for node, millis in pods.items():
        _sized(fleet, node, millis)
        _pod(fleet, node, f"app-{node}", millis)
    fleet.cluster.add_node("spare", allocatable=Resources(spare_millis, 8 * GI))
    return fleet


def test_a_node_whose_pods_fit_nowhere_waits_with_no_room_while_one_whose_pods_fit_starts() -> None:
    fleet = _full_nodes_and_a_spare({"node-00": 3000, "node-01": 1000}, spare_millis=2000)
    fleet.cluster.policies.apply(policy_object())
    controller = fleet.controller(limit=1)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-01")]
    assert explanations_by_node(controller)["node-00"] == (
        Reason.NO_ROOM,
        "no room for 1 pod (needs 3 CPU); 1.20.0 offered",
    )


def test_two_nodes_that_fit_alone_but_not_together_start_one_at_a_time() -> None:
    fleet = _full_nodes_and_a_spare({"node-00": 1500, "node-01": 1500}, spare_millis=2000)
    fleet.cluster.policies.apply(policy_object())
    controller = fleet.controller(limit=2)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-00")]
    assert explanations_by_node(controller)["node-01"] == (
        Reason.NO_ROOM,
        "no room for 1 pod (needs 1.5 CPU) with 1 other node updating; 1.20.0 offered",
    )


def test_a_node_updating_keeps_counting_against_the_next_passes() -> None:
    fleet = _full_nodes_and_a_spare({"node-00": 1500, "node-01": 1500}, spare_millis=2000)
    fleet.cluster.policies.apply(policy_object())
    controller = fleet.controller(limit=2)
    controller.tick()
    fleet.step("node-00")  # staged: next the controller asks it to drain and reboot
    controller.tick()
    assert fleet.specs()["node-00"] is UpdateState.REBOOTED_INTO_UPDATE
    assert started_shadows(fleet) == [shadow_name("node-00")]
    assert explanations_by_node(controller)["node-01"].reason is Reason.NO_ROOM


def test_a_node_back_from_its_reboot_no_longer_counts_as_leaving() -> None:
    fleet = _full_nodes_and_a_spare({"node-00": 1500, "node-01": 1500}, spare_millis=2000)
    fleet.cluster.policies.apply(policy_object())
    controller = fleet.controller(limit=2)
    controller.tick()
    for _ in range(2):  # staged, rebooted: next it is monitored, back in service
        fleet.step("node-00")
        controller.tick()
    controller.tick()
    assert fleet.specs()["node-00"] is UpdateState.MONITORING_UPDATE  # still in its slot
    assert started_shadows(fleet) == [shadow_name("node-00"), shadow_name("node-01")]


def test_with_capacity_check_false_a_node_whose_pods_fit_nowhere_starts() -> None:
    fleet = _full_nodes_and_a_spare({"node-00": 3000, "node-01": 1000}, spare_millis=2000)
    fleet.cluster.policies.apply(policy_object(capacityCheck=False))
    controller = fleet.controller(limit=2)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-00"), shadow_name("node-01")]


def test_without_a_policy_object_there_is_no_capacity_check() -> None:
    fleet = _full_nodes_and_a_spare({"node-00": 3000, "node-01": 1000}, spare_millis=2000)
    controller = fleet.controller(limit=2)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-00"), shadow_name("node-01")]


def test_a_node_with_nothing_to_evict_starts_whatever_the_room() -> None:
    fleet = _full_nodes_and_a_spare({"node-00": 3000}, spare_millis=0)
    fleet.add_node("node-01")
    fleet.cluster.policies.apply(policy_object())
    controller = fleet.controller(limit=2)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-01")]


class CountingPods(InMemoryPodRepository):
    """The in-memory pods, counting the cluster-wide listings."""

    listings = 0

    def list_all(self) -> list[Pod]:
        self.listings += 1
        return super().list_all()


class FailingPods(InMemoryPodRepository):
    """The in-memory pods, whose cluster-wide listing fails."""

    def list_all(self) -> list[Pod]:
        raise PortError("the apiserver is unavailable")

    def list_all_disruption_budgets(self) -> list[PodDisruptionBudget]:
        raise PortError("the apiserver is unavailable")


def _pods_of(fleet: Fleet, kind: type[InMemoryPodRepository]) -> InMemoryPodRepository:
    """A pod repository of `kind` over the fleet's pods."""
    pods = kind(fleet.cluster.revisions, fleet.cluster.nodes.store)
    pods.store = fleet.cluster.pods.store  # the same pods, seen through another repository
    return pods


def test_the_census_is_listed_only_by_passes_that_can_start_a_node() -> None:
    fleet = _full_nodes_and_a_spare({"node-00": 1000, "node-01": 1000}, spare_millis=4000)
    fleet.cluster.policies.apply(policy_object())
    pods = _pods_of(fleet, CountingPods)
    assert isinstance(pods, CountingPods)
    container = fleet.container(limit=1)
    container.pod_census.override(PodCensus(pods, fleet.cluster.nodes, census_seconds=30))
    controller = container.service()
    controller.tick()
    assert (pods.listings, started_shadows(fleet)) == (1, [shadow_name("node-00")])
    fleet.clock.advance(60)  # the census is old by now, but no slot is free
    for _ in range(3):
        controller.tick()
    assert pods.listings == 1


def test_a_census_that_cannot_be_listed_holds_every_start_naming_why() -> None:
    fleet = _full_nodes_and_a_spare({"node-00": 1000}, spare_millis=4000)
    fleet.cluster.policies.apply(policy_object())
    container = fleet.container(limit=1)
    container.pod_census.override(PodCensus(_pods_of(fleet, FailingPods), fleet.cluster.nodes))
    controller = container.service()
    controller.tick()
    assert started_shadows(fleet) == []
    assert explanations_by_node(controller)["node-00"] == (
        Reason.NO_ROOM,
        "room unknown: the cluster's pods could not be listed (the apiserver is unavailable);"
        " 1.20.0 offered",
    )


def test_cheapest_first_reads_its_costs_from_the_census() -> None:
    fleet = Fleet(3)
    for index in range(2):
        _pod(fleet, "node-00", f"a-{index}", 100)
    _pod(fleet, "node-01", "b-0", 100)
    controller = fleet.controller(limit=2)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-02"), shadow_name("node-01")]

"""The controller and the cluster's autoscalers, over the in-memory cluster: annotations while a
node updates, put back after; (with the start rules) nodes an autoscaler or a pod holds."""

from __future__ import annotations

from brupop.domain.cluster.objects import Taint
from brupop.domain.reason import Reason
from brupop.domain.shadow import shadow_name
from brupop.domain.starting.autoscaler_annotations import AUTOSCALER_RECORD_ANNOTATION as RECORD
from brupop.domain.starting.autoscaler_annotations import DO_NOT_DISRUPT_ANNOTATION as KARPENTER
from brupop.domain.starting.autoscaler_annotations import (
    SCALE_DOWN_DISABLED_ANNOTATION as SCALE_DOWN,
)
from brupop.domain.states import UpdateState as S
from brupop.services.controller.service import ControllerService
from tests.unit.services.controller.fleet import Fleet
from tests.unit.services.controller.passes import explanation_of, policy_object, started_shadows

GUARDED = {SCALE_DOWN: "true", KARPENTER: "true"}


def _annotations(fleet: Fleet, node: str) -> dict[str, str]:
    return dict(fleet.cluster.nodes.get(node).annotations)


def _guarded(fleet: Fleet, node: str) -> bool:
    annotations = _annotations(fleet, node)
    return all(annotations.get(k) == v for k, v in GUARDED.items())


def _run_until_updated(fleet: Fleet, controller: ControllerService, passes: int = 100) -> None:
    for _ in range(passes):
        controller.tick()
        if fleet.all_updated():
            controller.tick()
            return
        fleet.step_all()
        fleet.clock.advance(1)
    raise AssertionError("the fleet did not finish updating")


def test_a_node_carries_the_annotations_from_its_start_until_it_is_back_in_idle() -> None:
    fleet = Fleet(2)
    fleet.cluster.nodes.set_annotations("node-00", {KARPENTER: "false", "team": "a"})
    controller = fleet.controller(1)
    controller.tick()
    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE
    assert _guarded(fleet, "node-00"), "annotated in the pass that starts it"
    assert not _guarded(fleet, "node-01")
    while fleet.outside_idle():
        if fleet.shadow("node-00").spec.state is not S.IDLE:
            assert _guarded(fleet, "node-00")
        fleet.step_all()
        fleet.clock.advance(1)
        controller.tick()
    _run_until_updated(fleet, controller)
    assert _annotations(fleet, "node-00") == {KARPENTER: "false", "team": "a"}
    assert _annotations(fleet, "node-01") == {}


def test_an_administrators_own_do_not_disrupt_is_kept_after_the_update() -> None:
    fleet = Fleet(1)
    fleet.cluster.nodes.set_annotations("node-00", {KARPENTER: "true"})
    controller = fleet.controller(1)
    controller.tick()
    assert _guarded(fleet, "node-00")
    _run_until_updated(fleet, controller)
    assert _annotations(fleet, "node-00") == {KARPENTER: "true"}


def test_a_controller_restarted_mid_update_still_restores_the_node_after() -> None:
    fleet = Fleet(1)
    first = fleet.controller(1)
    first.tick()
    assert RECORD in _annotations(fleet, "node-00")
    first.elector.release()  # the first controller stops here
    for _ in range(20):  # the agent goes on alone and finishes
        fleet.step_all()
    second = fleet.controller(1)
    _run_until_updated(fleet, second)
    assert _annotations(fleet, "node-00") == {}


# --- start rules ---------------------------------------------------------------------------


def test_a_node_running_a_do_not_disrupt_pod_is_not_started_and_names_the_pod() -> None:
    fleet = Fleet(3)
    fleet.cluster.add_pod("default", "web-1", "node-01")
    fleet.cluster.add_pod("shop", "db-0", "node-01", annotations={KARPENTER: "true"})
    controller = fleet.controller(3)  # on without any policy object
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-00"), shadow_name("node-02")]
    reason, detail = explanation_of(controller, "node-01")
    assert reason is Reason.BLOCKING_POD
    assert detail.startswith("pod shop/db-0 has karpenter.sh/do-not-disrupt")
    assert not _guarded(fleet, "node-01")


def test_a_node_is_started_once_its_do_not_disrupt_pod_is_gone() -> None:
    fleet = Fleet(1)
    fleet.cluster.add_pod("shop", "db-0", "node-00", annotations={KARPENTER: "true"})
    controller = fleet.controller(1)
    controller.tick()
    assert started_shadows(fleet) == []
    fleet.cluster.pods.delete("shop", "db-0")
    fleet.clock.advance(10)  # past the pod listing's few seconds
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-00")]


def test_nodes_an_autoscaler_is_removing_are_not_started() -> None:
    fleet = Fleet(3)
    fleet.cluster.set_node_taints("node-00", [Taint("ToBeDeletedByClusterAutoscaler", "1")])
    fleet.cluster.set_node_deleting("node-01")
    controller = fleet.controller(3)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-02")]
    reason, detail = explanation_of(controller, "node-00")
    assert reason is Reason.AUTOSCALER
    assert detail.startswith("being removed by the cluster autoscaler")
    assert explanation_of(controller, "node-01").reason is Reason.AUTOSCALER


def test_nodes_younger_than_the_policys_minimum_age_wait_until_they_are_old_enough() -> None:
    fleet = Fleet(2)  # created at the fake clock's start
    fleet.cluster.policies.apply(policy_object(minNodeAgeSeconds=600))
    controller = fleet.controller(2)
    fleet.clock.advance(200)
    controller.tick()
    assert started_shadows(fleet) == []
    reason, detail = explanation_of(controller, "node-00")
    assert reason is Reason.NODE_TOO_YOUNG
    assert detail.startswith("node is 3m old; starts after 10m")
    fleet.clock.advance(400)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-00"), shadow_name("node-01")]


def test_a_node_running_a_pod_the_blocking_selector_matches_waits_naming_the_pod() -> None:
    fleet = Fleet(2)
    fleet.cluster.add_pod("batch", "etl-7", "node-00", labels={"app": "etl"})
    fleet.cluster.add_pod("default", "web-1", "node-01", labels={"app": "web"})
    # The fleet's nodes declare no allocatable: the capacity check would hold node-01's pod.
    policy = policy_object(blockingPodSelector="app in (etl,ml)", capacityCheck=False)
    fleet.cluster.policies.apply(policy)
    controller = fleet.controller(2)
    controller.tick()
    assert started_shadows(fleet) == [shadow_name("node-01")]
    reason, detail = explanation_of(controller, "node-00")
    assert reason is Reason.BLOCKING_POD
    assert detail.startswith("pod batch/etl-7 matches blockingPodSelector 'app in (etl,ml)'")

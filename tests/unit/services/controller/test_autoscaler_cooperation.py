"""The controller and the cluster's autoscalers, over the in-memory cluster: annotations while a
node updates, put back after; (with the start rules) nodes an autoscaler or a pod holds."""

from __future__ import annotations

from brupop.domain.autoscaler_annotations import AUTOSCALER_RECORD_ANNOTATION as RECORD
from brupop.domain.autoscaler_annotations import DO_NOT_DISRUPT_ANNOTATION as KARPENTER
from brupop.domain.autoscaler_annotations import SCALE_DOWN_DISABLED_ANNOTATION as SCALE_DOWN
from brupop.domain.states import UpdateState as S
from brupop.services.controller.service import ControllerService
from tests.unit.services.controller.fleet import Fleet

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

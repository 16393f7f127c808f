"""The controller's pass applies the policy's reboot hooks: a staged node reboots only once its
Node carries `before-reboot.<name>=done` for every hook, a monitored node goes Idle only once
the after-reboot hooks answered; the label and the answers are removed afterwards; a hook that
does not answer in time fails the node (returned to service, counted towards a halt)."""

from __future__ import annotations

from typing import Any

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.update_policy_status import PolicyPhase
from brupop.domain.reason import Reason
from brupop.domain.safety.reboot_hooks import HookPhase
from brupop.domain.states import UpdateState as S
from tests.unit.services.controller.fleet import NEW, OLD, Fleet, RecordingMetrics
from tests.unit.services.controller.passes import (
    events_of,
    explanation_of,
    policy_status,
    run_passes,
)

HOOK_SECONDS = 30
BEFORE, AFTER = HookPhase.BEFORE_REBOOT, HookPhase.AFTER_REBOOT


def _hooked(before: list[str], after: list[str], halt_after: int = 1) -> dict[str, Any]:
    hooks = {"beforeReboot": before, "afterReboot": after, "timeoutSeconds": HOOK_SECONDS}
    return {
        "metadata": {"name": "default"},
        "spec": {"hooks": hooks, "haltAfterFailures": halt_after},
    }


def _node(fleet: Fleet, name: str) -> Node:
    return fleet.cluster.nodes.get(name)


def _answer(fleet: Fleet, node: str, phase: HookPhase, hook: str) -> None:
    fleet.cluster.nodes.set_annotations(node, {phase.done_annotation(hook): "done"})


def _hook_marks(node: Node) -> list[str]:
    return [k for k in (*node.labels, *node.annotations) if "reboot" in k]


def test_a_staged_node_waits_for_its_before_reboot_hooks_named_in_its_reason() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(_hooked(["ceph-noout", "ticket"], []))
    controller = fleet.controller(1)

    run_passes(fleet, controller, 8)

    assert fleet.specs() == {"node-00": S.STAGED_AND_PERFORMED_UPDATE}, "no reboot yet"
    assert _node(fleet, "node-00").labels.get(BEFORE.label) == "true"
    reason, detail = explanation_of(controller, "node-00")
    assert reason is Reason.HOOK_PENDING
    assert "waiting for before reboot hook ceph-noout" in detail

    _answer(fleet, "node-00", BEFORE, "ceph-noout")
    run_passes(fleet, controller, 3)

    assert fleet.specs() == {"node-00": S.STAGED_AND_PERFORMED_UPDATE}, "ticket not answered"
    assert "waiting for before reboot hook ticket" in explanation_of(controller, "node-00").detail


def test_hooks_answering_in_time_let_the_node_update_and_their_marks_are_removed() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_hooked(["ceph-noout"], ["ceph-noout"]))
    controller = fleet.controller(1)
    asked: set[tuple[str, HookPhase]] = set()

    for _ in range(60):
        controller.tick()
        fleet.step_all()
        for name in fleet.names:
            labels = _node(fleet, name).labels
            for phase in (BEFORE, AFTER):
                if labels.get(phase.label) == "true":
                    asked.add((name, phase))
                    _answer(fleet, name, phase, "ceph-noout")
        fleet.clock.advance(1)

    assert fleet.all_updated()
    assert asked == {(n, p) for n in fleet.names for p in (BEFORE, AFTER)}
    assert [_hook_marks(_node(fleet, n)) for n in fleet.names] == [[], []]
    assert events_of(fleet, "RebootHookFailed") == []
    asked_events = [
        (e.shadow_name, e.reason)
        for e in fleet.cluster.events.recorded
        if e.reason in ("BeforeRebootHooks", "AfterRebootHooks")
    ]
    assert sorted(asked_events) == [
        (f"brs-{n}", reason)
        for n in fleet.names
        for reason in ("AfterRebootHooks", "BeforeRebootHooks")
    ], "one Event per phase asked, for the timeline"


def test_after_reboot_hooks_hold_a_monitored_node_until_they_answer() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(_hooked([], ["warm-cache"]))
    controller = fleet.controller(1)

    run_passes(fleet, controller, 10)

    assert fleet.specs() == {"node-00": S.MONITORING_UPDATE}
    assert _node(fleet, "node-00").labels.get(AFTER.label) == "true"
    waiting = explanation_of(controller, "node-00").detail
    assert "waiting for after reboot hook warm-cache" in waiting

    _answer(fleet, "node-00", AFTER, "warm-cache")
    run_passes(fleet, controller, 4)

    assert fleet.all_updated()
    assert _hook_marks(_node(fleet, "node-00")) == []


def test_a_hook_answering_late_fails_the_node_returns_it_to_service_and_halts() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(_hooked(["ceph-noout"], []))
    metrics = RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)

    run_passes(fleet, controller, HOOK_SECONDS + 10)
    _answer(fleet, "node-00", BEFORE, "ceph-noout")  # too late
    run_passes(fleet, controller, 10)

    failed = events_of(fleet, "RebootHookFailed")
    assert [e.shadow_name for e in failed] == ["brs-node-00"]
    assert "before reboot hook ceph-noout did not answer" in failed[0].message
    node_00 = fleet.shadow("node-00")
    assert node_00.spec.state is S.IDLE and node_00.status is not None
    assert (node_00.status.current_version, node_00.status.current_state) == (OLD, S.IDLE)
    assert node_00.status.crash_count == 1
    assert BEFORE.label not in _node(fleet, "node-00").labels, "the label is removed"
    status = policy_status(fleet)
    assert status.phase is PolicyPhase.HALTED
    assert status.halt_reason is not None
    assert (status.halt_reason.node, status.halt_reason.check) == ("node-00", "beforeRebootHook")
    assert metrics.gate_failures == ["beforeRebootHook"]
    assert ("reboot_hook", "StagedAndPerformedUpdate") in metrics.failures
    assert {e.shadow_name for e in events_of(fleet, "UpdateStarted")} == {"brs-node-00"}


def test_a_failed_hook_phase_removes_its_label_and_answers() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(_hooked([], ["warm-cache", "notify"], halt_after=5))
    controller = fleet.controller(1)

    run_passes(fleet, controller, 8)
    _answer(fleet, "node-00", AFTER, "warm-cache")
    run_passes(fleet, controller, HOOK_SECONDS + 5)

    assert _hook_marks(_node(fleet, "node-00")) == []
    failed = events_of(fleet, "RebootHookFailed")
    assert len(failed) == 1 and "after reboot hook notify did not answer" in failed[0].message
    shadow = fleet.shadow("node-00")
    assert shadow.status is not None and shadow.status.current_version == NEW
    assert (shadow.spec.state, shadow.status.current_state) == (S.IDLE, S.IDLE)


def test_a_node_failing_its_gate_while_an_after_reboot_hook_waits_loses_the_hook_marks() -> None:
    fleet = Fleet(1)
    policy = _hooked([], ["warm-cache"], halt_after=5)
    policy["spec"]["healthGate"] = {"timeoutSeconds": 5}
    fleet.cluster.policies.apply(policy)
    fleet.cluster.set_node_ready("node-00", False)
    controller = fleet.controller(1)

    run_passes(fleet, controller, 8)
    assert _node(fleet, "node-00").labels.get(AFTER.label) == "true"
    run_passes(fleet, controller, 10)

    assert [e.shadow_name for e in events_of(fleet, "HealthGateFailed")] == ["brs-node-00"]
    assert _hook_marks(_node(fleet, "node-00")) == [], "no hook stays asked"

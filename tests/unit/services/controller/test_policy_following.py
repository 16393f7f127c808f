"""The controller follows the `default` update policy: a pause (of the fleet, or of one Node by
its label) keeps nodes from starting while the ones in flight finish; other policy objects are
warned about once; a bad spec keeps the last good policy; deleting returns to the defaults;
the leader writes the status only when it changes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from structlog.testing import capture_logs

from brupop.adapters.memory.update_policies import InMemoryUpdatePolicyRepository
from brupop.domain.cluster.objects import ClusterEvent, EventSubject, EventType, WatchEvent
from brupop.domain.policy.policy_object import PolicySnapshot, UpdatePolicy
from brupop.domain.policy.update_policy import NODE_PAUSED_LABEL
from brupop.domain.policy.update_policy_status import NodeCounts, PolicyPhase, UpdatePolicyStatus
from brupop.domain.reason import Reason
from brupop.domain.states import UpdateState as S
from brupop.ports.errors import ForbiddenError, NotFoundError
from tests.unit.services.controller.fleet import Fleet, RecordingMetrics
from tests.unit.services.controller.passes import reasons_by_node, run_passes

NAMESPACE = "brupop-bottlerocket-aws"


def _policy(paused: bool = False, name: str = "default", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"paused": paused, **spec}}


def _default(fleet: Fleet) -> UpdatePolicy:
    return fleet.cluster.policies.store.get(f"{NAMESPACE}/default")


def _policy_events(fleet: Fleet) -> list[ClusterEvent]:
    recorded = fleet.cluster.events.recorded
    return [e for e in recorded if e.subject is EventSubject.UPDATE_POLICY]


def _only_policy_event(fleet: Fleet) -> tuple[str, str, EventType]:
    """The one event recorded about a policy: its policy's name, its reason and its type."""
    [event] = _policy_events(fleet)
    return event.shadow_name, event.reason, event.type


def test_a_paused_fleet_starts_nobody_and_the_node_in_flight_finishes() -> None:
    fleet = Fleet(3)
    metrics = RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)
    controller.tick()
    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE
    fleet.cluster.policies.apply(_policy(paused=True))

    run_passes(fleet, controller, 12)

    assert fleet.shadow("node-00").status.current_version == "1.20.0"  # type: ignore[union-attr]
    assert fleet.specs() == {"node-00": S.IDLE, "node-01": S.IDLE, "node-02": S.IDLE}
    assert fleet.outside_idle() == 0
    assert reasons_by_node(controller)["node-01"] is Reason.PAUSED
    assert metrics.fleet_paused is True


def test_unpausing_starts_the_next_node_on_the_next_pass() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_policy(paused=True))
    controller = fleet.controller(1)
    controller.tick()
    assert fleet.outside_idle() == 0

    fleet.cluster.policies.apply(_policy(paused=False))
    controller.tick()

    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE


def test_a_node_with_the_pause_label_waits_while_the_others_update() -> None:
    fleet = Fleet(3)
    fleet.cluster.nodes.set_labels("node-00", {NODE_PAUSED_LABEL: "true"})
    controller = fleet.controller(3)

    controller.tick()

    assert fleet.specs() == {
        "node-00": S.IDLE,
        "node-01": S.STAGED_AND_PERFORMED_UPDATE,
        "node-02": S.STAGED_AND_PERFORMED_UPDATE,
    }
    assert reasons_by_node(controller)["node-00"] is Reason.PAUSED


def test_removing_the_pause_label_starts_the_node_on_the_next_pass() -> None:
    fleet = Fleet(1)
    fleet.cluster.nodes.set_labels("node-00", {NODE_PAUSED_LABEL: "true"})
    controller = fleet.controller(1)
    controller.tick()
    assert fleet.outside_idle() == 0

    fleet.cluster.nodes.set_labels("node-00", {NODE_PAUSED_LABEL: None})
    controller.tick()

    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE


def test_a_node_labelled_paused_while_updating_finishes_its_update() -> None:
    fleet = Fleet(1)
    controller = fleet.controller(1)
    controller.tick()
    fleet.cluster.nodes.set_labels("node-00", {NODE_PAUSED_LABEL: "true"})

    run_passes(fleet, controller, 10)

    assert fleet.all_updated()


def test_a_policy_with_another_name_is_warned_about_once_and_ignored() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(_policy(paused=True, name="staging"))
    controller = fleet.controller(1)

    controller.tick()
    fleet.cluster.policies.apply(_policy(paused=False, name="staging"))
    controller.tick()
    controller.tick()

    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE
    assert _only_policy_event(fleet) == ("staging", "PolicyIgnored", EventType.WARNING)


def test_a_bad_spec_keeps_the_last_good_policy_and_says_why_in_the_status() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_policy(paused=True))
    controller = fleet.controller(1)
    controller.tick()

    fleet.cluster.policies.apply(_policy(paused=False, canary={"selector": "zone in (a"}))
    controller.tick()

    assert fleet.outside_idle() == 0, "the last good policy (paused) stays in force"
    status = _default(fleet).status
    assert status is not None
    assert status.phase is PolicyPhase.PAUSED
    assert status.message.startswith("The spec was not applied, the last good policy stays")
    assert "spec.canary.selector" in status.message
    assert status.observed_generation == 2
    assert [e.reason for e in _policy_events(fleet)] == ["PolicyInvalid"]


def test_deleting_the_policy_returns_to_the_defaults_with_an_event() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(_policy(paused=True))
    controller = fleet.controller(1)
    controller.tick()
    assert fleet.outside_idle() == 0

    fleet.cluster.policies.delete("default")
    controller.tick()

    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE
    assert _only_policy_event(fleet) == ("default", "PolicyDeleted", EventType.NORMAL)


def test_the_status_tells_the_phase_the_generation_and_the_nodes_by_state() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(_policy(paused=True))
    controller = fleet.controller(1)

    controller.tick()
    paused = _default(fleet).status
    fleet.cluster.policies.apply(_policy(paused=False))
    controller.tick()
    rolling = _default(fleet).status
    run_passes(fleet, controller, 40)
    done = _default(fleet).status

    assert paused is not None and rolling is not None and done is not None
    assert (paused.phase, paused.observed_generation) == (PolicyPhase.PAUSED, 1)
    assert paused.message == "Paused: no node starts until `brupop resume`."
    assert paused.nodes == NodeCounts(idle=3)
    assert (rolling.phase, rolling.observed_generation) == (PolicyPhase.ROLLING, 2)
    assert rolling.message == "Rolling: 1 node updating, 2 waiting."
    assert (done.phase, done.message) == (
        PolicyPhase.IDLE,
        "Idle: every node runs the version it is offered.",
    )
    assert fleet.all_updated()


def test_the_status_is_written_only_when_it_changes() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_policy(paused=True))
    controller = fleet.controller(1)
    controller.tick()
    written = _default(fleet).resource_version

    for _ in range(5):
        controller.tick()
        fleet.clock.advance(1)

    assert _default(fleet).resource_version == written


def test_only_the_leader_writes_the_status() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_policy(paused=True))
    leader, follower = fleet.controller(1), fleet.controller(1)
    leader.tick()
    follower.tick()
    assert follower.elector.is_leader() is False
    fleet.cluster.policies.apply(_policy(paused=True, haltAfterFailures=3))

    follower.tick()
    assert _default(fleet).status.observed_generation == 1  # type: ignore[union-attr]
    leader.tick()
    assert _default(fleet).status.observed_generation == 2  # type: ignore[union-attr]


def test_with_no_policy_object_nothing_is_written_and_no_event_is_recorded() -> None:
    fleet = Fleet(2)
    metrics = RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)

    run_passes(fleet, controller, 20)

    assert fleet.all_updated()
    assert _policy_events(fleet) == []
    assert metrics.fleet_paused is False


class _NoPolicyResource(InMemoryUpdatePolicyRepository):
    """The policy resource is not installed (an image upgraded before its CRDs): every read
    and watch is answered 404."""

    def read(self) -> PolicySnapshot:
        raise NotFoundError("the server could not find the requested resource")

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[UpdatePolicy]]:
        raise NotFoundError("the server could not find the requested resource")


def test_a_policy_resource_that_cannot_be_read_does_not_hold_up_the_rollout() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies = _NoPolicyResource(fleet.cluster.revisions, NAMESPACE)
    controller = fleet.controller(2)

    with capture_logs() as logs:
        controller.tick()
        controller.tick()

    assert fleet.outside_idle() == 2
    assert [e["event"] for e in logs if e["event"].startswith("policy.")] == ["policy.unreadable"]


class _StatusRefused(InMemoryUpdatePolicyRepository):
    """A cluster where the controller may not write the policy's status."""

    def update_status(
        self, status: UpdatePolicyStatus, resource_version: str | None = None
    ) -> UpdatePolicy:
        raise ForbiddenError("cannot patch bottlerocketupdatepolicies/status")


def test_a_refused_status_write_is_warned_about_once_and_retried() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(_policy(paused=True))
    refusing = _StatusRefused(fleet.cluster.revisions, NAMESPACE)
    refusing.store = fleet.cluster.policies.store
    fleet.cluster.policies = refusing
    controller = fleet.controller(1)

    with capture_logs() as logs:
        for _ in range(3):
            controller.tick()

    warnings = [e for e in logs if e["event"] == "policy.status_not_written"]
    assert [e["log_level"] for e in warnings] == ["warning", "debug", "debug"]
    assert fleet.outside_idle() == 0, "the pause holds even though its status cannot be written"

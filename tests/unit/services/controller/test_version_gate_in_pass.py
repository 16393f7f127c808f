"""The controller and the policy's `version` section: a pin holds newer versions, a release age
holds a version until it was first seen long enough ago; first-seen times are written in the
policy status and read back by a restarted controller or a new leader; without a policy object
nothing is tracked."""

from __future__ import annotations

from typing import Any

from brupop.domain.policy.update_policy_status import VersionSeen
from brupop.domain.reason import Reason
from brupop.domain.shadow import Shadow, ShadowSpec, shadow_name
from brupop.domain.states import UpdateState as S
from brupop.services.controller.service import ControllerService
from tests.unit.services.controller.fleet import NEW, START, Fleet
from tests.unit.services.controller.passes import explanations_by_node, policy_object, policy_status

NAMESPACE = "brupop-bottlerocket-aws"


def _written(fleet: Fleet) -> tuple[VersionSeen, ...]:
    return policy_status(fleet).versions_first_seen


def _first_seen(controller: ControllerService) -> dict[str, str]:
    return {entry["version"]: entry["first_seen"] for entry in _json(controller)}


def _json(controller: ControllerService) -> list[dict[str, Any]]:
    return [standing.as_json() for standing in controller.versions()]


def test_the_leader_writes_when_each_offered_version_was_first_seen() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(policy_object(paused=True))
    fleet.controller(1).tick()

    assert _written(fleet) == (VersionSeen(version=NEW, at=START),)


def test_a_restarted_controller_keeps_the_first_seen_time_from_the_status() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(policy_object(paused=True))
    first = fleet.controller(1)
    first.tick()
    first.elector.release()
    fleet.clock.advance(3600)

    restarted = fleet.controller(1)
    restarted.tick()

    assert restarted.elector.is_leader()
    assert _first_seen(restarted) == {NEW: "2026-01-05T10:00:00+00:00"}
    assert _written(fleet) == (VersionSeen(version=NEW, at=START),)


def test_a_version_offered_later_is_first_seen_when_a_quorum_reports_it() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(policy_object(paused=True))
    controller = fleet.controller(1)
    controller.tick()
    fleet.clock.advance(300)
    fleet.add_node("late-1", target="1.21.0")
    controller.tick()  # one node of three: short of the quorum of two
    fleet.clock.advance(300)
    fleet.add_node("late-2", target="1.21.0")

    controller.tick()

    assert _first_seen(controller) == {
        NEW: "2026-01-05T10:00:00+00:00",
        "1.21.0": "2026-01-05T10:10:00+00:00",
    }


def test_without_a_policy_object_no_version_is_tracked() -> None:
    fleet = Fleet(2)
    controller = fleet.controller(1)
    controller.tick()

    assert controller.versions() == []


def test_deleting_the_policy_object_forgets_the_first_seen_times() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(policy_object(paused=True))
    controller = fleet.controller(1)
    controller.tick()
    fleet.cluster.policies.store.delete(f"{NAMESPACE}/default")

    controller.tick()

    assert controller.versions() == []


def test_a_pin_below_the_offered_version_leaves_every_node_waiting_pinned() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(policy_object(version={"pin": "1.19.5"}))
    controller = fleet.controller(3)

    for _ in range(3):
        controller.tick()
        fleet.clock.advance(60)

    assert fleet.outside_idle() == 0
    reasons = explanations_by_node(controller)
    assert {reason for reason, _ in reasons.values()} == {Reason.PINNED}
    assert all(detail.startswith("pinned to 1.19.5") for _, detail in reasons.values())


def test_a_pin_equal_to_the_offered_version_lets_nodes_start() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(policy_object(version={"pin": NEW}))
    controller = fleet.controller(2)

    controller.tick()

    assert set(fleet.specs().values()) == {S.STAGED_AND_PERFORMED_UPDATE}


class RacingAgent:
    """The in-memory shadows, where the agent of `node` reports a newer offered version just
    before the controller's first start of it is written (so that write conflicts)."""

    def __init__(self, fleet: Fleet, node: str, offered: str) -> None:
        self._fleet = fleet
        self._name = shadow_name(node)
        self._offered = offered
        self._inner = fleet.cluster.shadows
        self.raced = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def replace_spec(self, name: str, spec: ShadowSpec, resource_version: str | None) -> Shadow:
        if name == self._name and not self.raced:
            self.raced = True
            status = self._inner.get(name).status
            assert status is not None
            newer = status.model_copy(update={"target_version": self._offered})
            self._inner.update_status(name, newer)
        return self._inner.replace_spec(name, spec, resource_version)


def test_a_start_whose_write_conflicted_meets_the_pin_again_on_the_next_pass() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(policy_object(version={"pin": NEW}))
    racing = RacingAgent(fleet, "node-00", "1.21.0")
    fleet.cluster.shadows = racing  # type: ignore[assignment]
    controller = fleet.controller(1)

    controller.tick()  # starts node-00 to 1.20.0; the write conflicts with the agent's report
    assert racing.raced and fleet.outside_idle() == 0
    controller.tick()  # within the choice's reuse: the node now offered 1.21.0 must not start

    assert fleet.outside_idle() == 0
    assert explanations_by_node(controller)["node-00"].reason is Reason.PINNED


def test_a_version_younger_than_the_release_age_starts_once_it_is_old_enough() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(policy_object(version={"minReleaseAgeHours": 2}))
    controller = fleet.controller(1)
    controller.tick()
    assert fleet.outside_idle() == 0
    assert explanations_by_node(controller)["node-00"].reason is Reason.RELEASE_TOO_NEW
    assert explanations_by_node(controller)["node-00"].detail.startswith(
        f"{NEW} first offered 2026-01-05T10:00:00+00:00; eligible at 2026-01-05T12:00:00+00:00"
    )

    fleet.clock.advance(2 * 3600 - 1)
    controller.tick()
    assert fleet.outside_idle() == 0

    fleet.clock.advance(1)
    controller.tick()
    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE


def test_a_restarted_controller_counts_the_release_age_from_the_first_sighting() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(policy_object(version={"minReleaseAgeHours": 2}))
    first = fleet.controller(1)
    first.tick()
    first.elector.release()
    fleet.clock.advance(90 * 60)

    restarted = fleet.controller(1)
    restarted.tick()
    assert fleet.outside_idle() == 0
    fleet.clock.advance(30 * 60)
    restarted.tick()

    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE


def test_a_pinned_node_names_the_pin_even_when_its_budget_is_full() -> None:
    fleet = Fleet(3)
    for name in fleet.names:
        fleet.cluster.nodes.set_labels(name, {"topology.kubernetes.io/zone": "zone-a"})
    budget = {"groupBy": "topology.kubernetes.io/zone", "maxConcurrent": 1}
    fleet.cluster.policies.apply(policy_object(budgets=[budget]))
    controller = fleet.controller(3)
    controller.tick()
    assert fleet.outside_idle() == 1

    fleet.cluster.policies.apply(policy_object(budgets=[budget], version={"pin": "1.19.5"}))
    controller.tick()

    reasons = explanations_by_node(controller).values()
    waiting = [reason for reason, _ in reasons if reason is not Reason.UPDATING]
    assert waiting == [Reason.PINNED, Reason.PINNED]

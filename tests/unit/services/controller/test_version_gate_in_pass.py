"""The controller and the policy's `version` section: first-seen times of offered versions are
noted, written in the policy status and read back by a restarted controller or a new leader;
without a policy object nothing is tracked."""

from __future__ import annotations

from typing import Any

from brupop.domain.update_policy_status import VersionSeen
from brupop.services.controller.service import ControllerService
from tests.unit.services.controller.fleet import NEW, START, Fleet

NAMESPACE = "brupop-bottlerocket-aws"


def _policy(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "default"}, "spec": spec}


def _written(fleet: Fleet) -> tuple[VersionSeen, ...]:
    status = fleet.cluster.policies.store.get(f"{NAMESPACE}/default").status
    assert status is not None
    return status.versions_first_seen


def _first_seen(controller: ControllerService) -> dict[str, str]:
    return {entry["version"]: entry["first_seen"] for entry in _json(controller)}


def _json(controller: ControllerService) -> list[dict[str, Any]]:
    return [standing.as_json() for standing in controller.versions()]


def test_the_leader_writes_when_each_offered_version_was_first_seen() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_policy(paused=True))
    fleet.controller(1).tick()

    assert _written(fleet) == (VersionSeen(version=NEW, at=START),)


def test_a_restarted_controller_keeps_the_first_seen_time_from_the_status() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_policy(paused=True))
    first = fleet.controller(1)
    first.tick()
    first.elector.release()
    fleet.clock.advance(3600)

    restarted = fleet.controller(1)
    restarted.tick()

    assert restarted.elector.is_leader()
    assert _first_seen(restarted) == {NEW: "2026-01-05T10:00:00+00:00"}
    assert _written(fleet) == (VersionSeen(version=NEW, at=START),)


def test_a_version_offered_later_is_first_seen_when_it_appears() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(_policy(paused=True))
    controller = fleet.controller(1)
    controller.tick()
    fleet.clock.advance(600)
    fleet.add_node("late", target="1.21.0")

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
    fleet.cluster.policies.apply(_policy(paused=True))
    controller = fleet.controller(1)
    controller.tick()
    fleet.cluster.policies.store.delete(f"{NAMESPACE}/default")

    controller.tick()

    assert controller.versions() == []

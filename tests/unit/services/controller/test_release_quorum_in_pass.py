"""The controller and the release-age quorum: one node reporting a version early does not start
its age for the fleet; the age starts when a quorum reports it, a node held by the quorum says
how many nodes report its version, and a first-seen time an older controller recorded for a
version too few nodes report is forgotten."""

from __future__ import annotations

from brupop.domain.policy.update_policy_status import UpdatePolicyStatus, VersionSeen
from brupop.domain.reason import Reason
from brupop.domain.shadow import shadow_name
from brupop.domain.states import UpdateState as S
from brupop.services.controller.service import ControllerService
from tests.unit.services.controller.fleet import NEW, START, Fleet
from tests.unit.services.controller.passes import explanations_by_node, policy_object

LATER = "1.21.0"
NODES = ("node-a", "node-b", "node-c")
HOUR = 3600


def _fleet_on_the_newest_version() -> Fleet:
    """Three nodes that run the newest version and are offered nothing, under a 48 h age."""
    fleet = Fleet(0)
    for name in NODES:
        fleet.add_node(name, current=NEW, target=NEW)
    fleet.cluster.policies.apply(policy_object(version={"minReleaseAgeHours": 48}))
    return fleet


def _offer(fleet: Fleet, node: str, version: str) -> None:
    """The agent of `node` reports that its host is offered `version`."""
    name = shadow_name(node)
    status = fleet.cluster.shadows.get(name).status
    assert status is not None
    fleet.cluster.shadows.update_status(name, status.model_copy(update={"target_version": version}))


def _started(fleet: Fleet) -> list[str]:
    return sorted(n for n, state in fleet.specs().items() if state is not S.IDLE)


def _ship_and_wait(fleet: Fleet, controller: ControllerService) -> None:
    """Every host is offered the version now: nothing starts for 48 h from this moment."""
    shipped = fleet.clock.now()
    for name in NODES:
        _offer(fleet, name, LATER)
    controller.tick()
    assert _started(fleet) == []
    fleet.clock.advance(48 * HOUR - 1)
    controller.tick()
    assert _started(fleet) == [], f"started before 48 h from {shipped.isoformat()}"
    fleet.clock.advance(1)
    controller.tick()
    assert _started(fleet) != []


def test_one_node_reporting_a_version_early_does_not_start_its_release_age() -> None:
    fleet = _fleet_on_the_newest_version()
    controller = fleet.controller(3)
    controller.tick()
    _offer(fleet, "node-a", LATER)  # once, before the version exists
    controller.tick()
    _offer(fleet, "node-a", NEW)
    controller.tick()
    fleet.clock.advance(49 * HOUR)
    controller.tick()

    _ship_and_wait(fleet, controller)


def test_a_node_held_by_the_quorum_says_how_many_nodes_report_its_version() -> None:
    fleet = _fleet_on_the_newest_version()
    controller = fleet.controller(3)
    _offer(fleet, "node-a", LATER)
    controller.tick()
    fleet.clock.advance(49 * HOUR)
    controller.tick()

    assert _started(fleet) == []
    reason, detail = explanations_by_node(controller)["node-a"]
    assert reason is Reason.RELEASE_TOO_NEW
    assert detail.startswith(f"{LATER} offered by 1 of 2 nodes needed to start its release age")


def test_the_release_age_starts_when_the_second_node_reports_the_version() -> None:
    fleet = _fleet_on_the_newest_version()
    controller = fleet.controller(3)
    _offer(fleet, "node-a", LATER)
    controller.tick()
    fleet.clock.advance(HOUR)
    _offer(fleet, "node-b", LATER)
    controller.tick()

    seen = {standing.version: standing.first_seen for standing in controller.versions()}
    assert seen[LATER] == START.replace(hour=START.hour + 1)


def test_a_first_seen_time_recorded_from_one_node_by_an_older_controller_is_forgotten() -> None:
    fleet = _fleet_on_the_newest_version()
    planted = UpdatePolicyStatus(versions_first_seen=(VersionSeen(version=LATER, at=START),))
    fleet.cluster.policies.update_status(planted)
    controller = fleet.controller(3)
    fleet.clock.advance(49 * HOUR)
    controller.tick()

    _ship_and_wait(fleet, controller)


def test_a_set_quorum_of_one_lets_one_node_start_the_release_age() -> None:
    fleet = _fleet_on_the_newest_version()
    controller = fleet.controller(3, release_age_quorum=1)
    _offer(fleet, "node-a", LATER)
    controller.tick()
    fleet.clock.advance(48 * HOUR)
    controller.tick()

    assert _started(fleet) == ["node-a"]

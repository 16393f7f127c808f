"""The controller asks Idle nodes to prepare ahead when the policy says so: at most
`maxConcurrent` preparing at once, none while paused or halted, and never once they are in
their turn; without the section nothing is asked."""

from __future__ import annotations

from brupop.domain.shadow import shadow_name
from brupop.domain.states import UpdateState as S
from tests.unit.services.controller.fleet import NEW, Fleet
from tests.unit.services.controller.passes import events_of, policy_object

PRESTAGE = {"enabled": True, "maxConcurrent": 2}


def _asked(fleet: Fleet) -> dict[str, str | None]:
    return {s.node_name: s.spec.prestage_version for s in fleet.shadows()}


def _report_staged(fleet: Fleet, node: str) -> None:
    status = fleet.shadow(node).status
    assert status is not None
    staged = status.model_copy(update={"staged_version": NEW, "staged_state": "Staged"})
    fleet.cluster.shadows.update_status(shadow_name(node), staged)


def test_without_a_prestage_section_no_node_is_asked_to_prepare_ahead() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(policy_object(paused=True))
    fleet.controller(1).tick()

    assert set(_asked(fleet).values()) == {None}


def test_at_most_max_concurrent_idle_nodes_prepare_ahead_and_a_prepared_one_frees_a_place() -> None:
    fleet = Fleet(4)
    # A closed window keeps every node Idle: only prestaging moves.
    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE))
    controller = fleet.controller(1, window="0 0 0 1 1 * 2099")
    controller.tick()
    assert _asked(fleet) == {"node-00": NEW, "node-01": NEW, "node-02": None, "node-03": None}

    _report_staged(fleet, "node-00")
    controller.tick()

    assert _asked(fleet) == {"node-00": NEW, "node-01": NEW, "node-02": NEW, "node-03": None}


def test_each_preparation_ahead_is_told_by_events_from_its_request_to_its_end() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE))
    controller = fleet.controller(1, window="0 0 0 1 1 * 2099")
    controller.tick()
    asked = events_of(fleet, "UpdatePrestaging")
    assert [(e.shadow_name, e.message) for e in asked] == [
        ("brs-node-00", f"Preparing {NEW} ahead of its turn (no cordon)"),
        ("brs-node-01", f"Preparing {NEW} ahead of its turn (no cordon)"),
    ]

    _report_staged(fleet, "node-00")
    controller.tick()
    fleet.cluster.policies.apply(policy_object(paused=True, prestage=PRESTAGE))
    controller.tick()

    assert [e.shadow_name for e in events_of(fleet, "UpdateStagedAhead")] == ["brs-node-00"]
    stopped = events_of(fleet, "UpdatePrestageStopped")
    assert sorted(e.shadow_name for e in stopped) == ["brs-node-01", "brs-node-02"]


def test_a_pause_stops_every_preparation_not_yet_in_its_turn() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE))
    controller = fleet.controller(1, window="0 0 0 1 1 * 2099")
    controller.tick()
    assert list(_asked(fleet).values()).count(NEW) == 2

    fleet.cluster.policies.apply(policy_object(paused=True, prestage=PRESTAGE))
    controller.tick()

    assert set(_asked(fleet).values()) == {None}


def test_a_pin_below_the_offered_version_stops_its_preparation() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE))
    controller = fleet.controller(1, window="0 0 0 1 1 * 2099")
    controller.tick()
    assert set(_asked(fleet).values()) == {NEW}

    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE, version={"pin": "1.19.5"}))
    controller.tick()

    assert set(_asked(fleet).values()) == {None}


def test_a_halt_mid_staging_stops_every_preparation_not_yet_in_its_turn() -> None:
    fleet = Fleet(3)
    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE, haltAfterFailures=1))
    controller = fleet.controller(1)
    controller.tick()
    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE
    assert _asked(fleet) == {"node-00": None, "node-01": NEW, "node-02": None}  # 00 downloads

    fleet.fail("node-00")
    controller.tick()

    assert set(_asked(fleet).values()) == {None}


def test_a_version_too_young_for_the_release_age_is_not_prepared_until_it_is_old_enough() -> None:
    fleet = Fleet(2)
    young = {"minReleaseAgeHours": 2}
    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE, version=young))
    controller = fleet.controller(1, window="0 0 0 1 1 * 2099")
    controller.tick()
    assert set(_asked(fleet).values()) == {None}

    fleet.clock.advance(2 * 3600 - 1)
    controller.tick()
    assert set(_asked(fleet).values()) == {None}

    fleet.clock.advance(1)
    controller.tick()
    assert set(_asked(fleet).values()) == {NEW}


def test_a_release_age_set_while_nodes_prepare_stops_their_preparation() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE))
    controller = fleet.controller(1, window="0 0 0 1 1 * 2099")
    controller.tick()
    assert set(_asked(fleet).values()) == {NEW}

    young = {"minReleaseAgeHours": 2}
    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE, version=young))
    controller.tick()

    assert set(_asked(fleet).values()) == {None}


def _staged_then(fleet: Fleet, **spec: object) -> dict[str, S]:
    """Two nodes started and activated (StagedAndPerformedUpdate), then the policy `spec`."""
    fleet.cluster.policies.apply(policy_object(**spec, paused=False))
    controller = fleet.controller(2)
    controller.tick()
    fleet.step_all()
    assert sorted(fleet.specs().values()).count(S.STAGED_AND_PERFORMED_UPDATE) == 2
    fleet.cluster.policies.apply(policy_object(**spec, paused=True))
    controller.tick()
    return fleet.specs()


def test_with_prestaging_a_pause_sends_activated_nodes_back_to_idle_before_their_reboot() -> None:
    specs = _staged_then(Fleet(3), prestage=PRESTAGE)

    assert set(specs.values()) == {S.IDLE}


def test_without_prestaging_a_pause_lets_activated_nodes_finish_as_before() -> None:
    specs = _staged_then(Fleet(3))

    assert sorted(specs.values()).count(S.REBOOTED_INTO_UPDATE) == 2


def test_with_prestaging_a_pin_below_sends_activated_nodes_back_to_idle() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE))
    controller = fleet.controller(2)
    controller.tick()
    fleet.step_all()

    fleet.cluster.policies.apply(policy_object(prestage=PRESTAGE, version={"pin": "1.19.5"}))
    controller.tick()

    assert set(fleet.specs().values()) == {S.IDLE}

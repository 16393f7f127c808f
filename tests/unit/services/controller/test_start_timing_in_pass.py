"""The policy's windows, blackouts and finishBy in the controller's pass: windows in time zones
replace the environment's window, a blackout starting mid-rollout lets the node in flight
finish and starts no other, finishBy holds a start near the window's end with the duration
learned from the fleet, and the learned durations survive a controller restart."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from brupop.domain.policy.update_policy import NODE_PAUSED_LABEL
from brupop.domain.reason import Reason
from brupop.services.controller.service import ControllerService
from tests.unit.services.controller.fleet import NEW, START, Fleet
from tests.unit.services.controller.passes import (
    policy_object,
    policy_status,
    report_row,
    run_passes,
)

TEN_TO_NOON_UTC = {"cron": "* * 10-11 * * * *", "timeZone": "UTC"}


TAKEOVER_SECONDS = 20  # a new replica's next look at the Lease: its duration plus a renewal


def _at(fleet: Fleet, moment: datetime) -> None:
    fleet.clock.advance((moment - fleet.clock.now()).total_seconds())


def _restart(fleet: Fleet) -> ControllerService:
    """A new replica (the old one is gone) that takes the Lease over once it expires."""
    restarted = fleet.controller(1)
    restarted.tick()
    fleet.clock.advance(TAKEOVER_SECONDS)
    restarted.tick()
    assert restarted.elector.is_leader()
    return restarted


def test_the_policy_windows_replace_the_environment_window() -> None:
    fleet = Fleet(1)
    # 10:00 UTC is 19:00 in Tokyo: the Tokyo night window (02:00-03:59) is closed.
    tokyo = {"cron": "* * 2-3 * * * *", "timeZone": "Asia/Tokyo"}
    fleet.cluster.policies.apply(policy_object(windows=[tokyo], finishBy=False))
    controller = fleet.controller(1, window="* * * * * * *")

    controller.tick()

    assert fleet.outside_idle() == 0
    row = report_row(controller, "node-00")
    assert row.reason is Reason.OUTSIDE_WINDOW
    assert row.detail == (
        f"outside the update windows; next start at 2026-01-05T17:00:00Z; {NEW} offered"
    )
    _at(fleet, datetime(2026, 1, 5, 17, 0, 1, tzinfo=UTC))
    controller.tick()
    assert fleet.outside_idle() == 1


def test_a_policy_without_windows_keeps_the_environment_window() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(policy_object(finishBy=False))
    controller = fleet.controller(1, window="* * 2-3 * * * *")  # closed at 10:00 UTC

    controller.tick()

    assert fleet.outside_idle() == 0
    assert report_row(controller, "node-00").reason is Reason.OUTSIDE_WINDOW


def test_a_blackout_starting_mid_rollout_lets_the_node_in_flight_finish_and_starts_none() -> None:
    fleet = Fleet(3)
    freeze_start = START + timedelta(seconds=5)
    blackout = {
        "start": freeze_start.isoformat(),
        "end": (START + timedelta(days=2)).isoformat(),
        "reason": "holiday freeze",
    }
    fleet.cluster.policies.apply(policy_object(blackouts=[blackout], finishBy=False))
    controller = fleet.controller(1)
    controller.tick()
    assert fleet.outside_idle() == 1  # node-00 started before the blackout

    run_passes(fleet, controller, 20, 10)

    assert fleet.shadow("node-00").status.current_version == NEW  # type: ignore[union-attr]
    assert fleet.outside_idle() == 0
    row = report_row(controller, "node-01")
    assert row.reason is Reason.BLACKOUT
    assert row.detail == f"blackout until 2026-01-07T10:00:00Z: holiday freeze; {NEW} offered"


def test_finish_by_holds_a_start_near_the_window_end_with_the_learned_duration() -> None:
    fleet = Fleet(2)
    fleet.cluster.nodes.set_labels("node-01", {NODE_PAUSED_LABEL: "true"})
    fleet.cluster.policies.apply(policy_object(windows=[TEN_TO_NOON_UTC]))
    controller = fleet.controller(1)
    run_passes(fleet, controller, 8, 300)  # node-00 updates, a pass every 5 minutes
    learned = policy_status(fleet).update_durations
    assert len(learned) == 1 and learned[0] > 900  # longer than the 15-minute guess
    assert policy_status(fleet).expected_update_seconds == learned[0]

    # Between 15 minutes and the learned duration before the window closes at 12:00.
    noon = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    _at(fleet, noon - timedelta(seconds=(learned[0] + 900) // 2))
    fleet.cluster.nodes.set_labels("node-01", {NODE_PAUSED_LABEL: None})
    controller.tick()
    controller.tick()

    assert controller.elector.is_leader()
    assert fleet.outside_idle() == 0
    row = report_row(controller, "node-01")
    assert row.reason is Reason.FINISH_BY
    minutes = math.ceil(learned[0] / 60)
    assert row.detail.startswith(
        f"would not finish before the window closes at 12:00 UTC (expected {minutes} min); "
        "next start at 2026-01-06T10:00:00Z"
    )


def test_a_controller_restart_keeps_the_learned_durations() -> None:
    fleet = Fleet(2)
    fleet.cluster.nodes.set_labels("node-01", {NODE_PAUSED_LABEL: "true"})
    fleet.cluster.policies.apply(policy_object(windows=[TEN_TO_NOON_UTC]))
    first = fleet.controller(1)
    run_passes(fleet, first, 8, 300)
    [learned] = policy_status(fleet).update_durations

    noon = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    _at(fleet, noon - timedelta(seconds=(learned + 900) // 2 + TAKEOVER_SECONDS))
    restarted = _restart(fleet)
    fleet.cluster.nodes.set_labels("node-01", {NODE_PAUSED_LABEL: None})
    restarted.tick()
    restarted.tick()

    # Without the learned duration the 15-minute guess would fit and node-01 would start.
    assert fleet.outside_idle() == 0
    assert report_row(restarted, "node-01").reason is Reason.FINISH_BY
    _at(fleet, datetime(2026, 1, 6, 10, 0, tzinfo=UTC))
    run_passes(fleet, restarted, 8, 300)
    assert fleet.all_updated()
    durations = policy_status(fleet).update_durations
    assert len(durations) == 2 and durations[0] == learned


def test_with_no_policy_object_nothing_is_learned_and_the_environment_window_decides() -> None:
    fleet = Fleet(1)
    controller = fleet.controller(1, window="* * 10 * * * *")
    _at(fleet, datetime(2026, 1, 5, 10, 59, 0, tzinfo=UTC))  # a minute before it closes

    controller.tick()

    assert fleet.outside_idle() == 1  # no finishBy without a policy object


def test_a_failed_update_teaches_no_duration() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(policy_object())
    controller = fleet.controller(1)
    controller.tick()
    fleet.step("node-00")  # staged
    controller.tick()
    fleet.fail("node-00")  # the reboot step fails
    run_passes(fleet, controller, 4, 5)

    shadow = fleet.shadow("node-00")
    assert shadow.status is not None and shadow.status.current_state.value == "Idle"
    assert shadow.status.current_version != NEW
    assert policy_status(fleet).update_durations == ()
    assert policy_status(fleet).expected_update_seconds == 900


def test_a_new_leader_counts_on_from_the_durations_the_old_one_wrote() -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(policy_object())
    leader, follower = fleet.controller(1), fleet.controller(1)
    for _ in range(8):
        leader.tick()
        follower.tick()
        fleet.step_all()
        fleet.clock.advance(1)
        if len(policy_status(fleet).update_durations) == 1:
            break
    [first] = policy_status(fleet).update_durations

    fleet.clock.advance(16)  # the leader is gone; its Lease expires
    for _ in range(10):
        follower.tick()
        fleet.step_all()
        fleet.clock.advance(1)

    assert fleet.all_updated()
    durations = policy_status(fleet).update_durations
    assert len(durations) == 2 and durations[0] == first

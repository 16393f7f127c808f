"""Notifications as values: Events mapped onto them, the rollout and fleet trackers, and both
wire formats (the json one checked against the documented schema)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jsonschema
import pytest

from brupop.domain.cluster.objects import ClusterEvent, EventSubject, EventType
from brupop.domain.reporting.notification_formats import SCHEMA_V1, as_json_v1, as_slack
from brupop.domain.reporting.notifications import (
    Notification,
    NotificationKind,
    drain_blocked,
    from_cluster_event,
    started_version,
)
from brupop.domain.reporting.rollout_tracking import FleetTracker, RolloutTracker
from tests.support.webhook_receiver import validate_v1

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _event(reason: str, message: str) -> ClusterEvent:
    return ClusterEvent("brs-node-1", "brupop", reason, message, EventType.NORMAL)


def test_a_completed_update_event_is_a_node_updated_notification_with_its_version() -> None:
    note = from_cluster_event(_event("UpdateCompleted", "Now running 1.20.0"), T0)
    assert note is not None
    assert (note.kind, note.node, note.version) == (
        NotificationKind.NODE_UPDATED,
        "node-1",
        "1.20.0",
    )


@pytest.mark.parametrize(
    ("reason", "why"),
    [
        ("UpdateFailed", "agent_error"),
        ("UpdateTimedOut", "timeout"),
        ("HealthGateFailed", "health_gate"),
        ("RebootHookFailed", "reboot_hook"),
    ],
)
def test_a_failure_event_is_a_node_failed_notification_with_its_reason(
    reason: str, why: str
) -> None:
    note = from_cluster_event(_event(reason, "it broke"), T0)
    assert note is not None
    assert (note.kind, note.reason) == (NotificationKind.NODE_FAILED, why)
    assert "it broke" in note.summary


def test_other_events_and_policy_events_are_not_notifications() -> None:
    assert from_cluster_event(_event("UpdateStarted", "Starting"), T0) is None
    policy = ClusterEvent(
        "default", "brupop", "UpdateCompleted", "x", EventType.NORMAL, EventSubject.UPDATE_POLICY
    )
    assert from_cluster_event(policy, T0) is None


def test_a_rollout_starts_with_the_controllers_first_start_and_finishes_when_all_run_it() -> None:
    tracker = RolloutTracker()
    assert tracker.observe({"Idle": 3}, {"1.19.0": 3}, T0) == []
    started = tracker.starting("1.20.0", T0)
    assert [(n.kind, n.version) for n in started] == [(NotificationKind.ROLLOUT_STARTED, "1.20.0")]
    tracker.count_failure()
    later = T0 + timedelta(minutes=5)
    busy = tracker.observe({"Idle": 2, "MonitoringUpdate": 1}, {"1.20.0": 3}, later)
    assert busy == [], "not finished while a node is still monitoring"
    done = tracker.observe({"Idle": 3}, {"1.20.0": 3}, later)
    assert [n.kind for n in done] == [NotificationKind.ROLLOUT_FINISHED]
    assert done[0].counts == {"nodes": 3, "updated": 3, "failures": 1}
    assert done[0].duration_seconds == 300.0
    assert tracker.observe({"Idle": 3}, {"1.20.0": 3}, later) == [], "told once"


def test_two_hundred_versions_claimed_by_one_agent_announce_no_rollout() -> None:
    tracker = RolloutTracker()
    tracker.observe({"Idle": 3}, {"1.19.0": 3}, T0)
    told = [
        note
        for n in range(200)
        for note in tracker.observe({"Idle": 3}, {"1.19.0": 2, f"1.{20 + n}.0": 1}, T0)
    ]
    assert told == []


def test_each_version_the_controller_offers_is_announced_once() -> None:
    tracker = RolloutTracker()
    tracker.observe({"Idle": 3}, {"1.19.0": 3}, T0)
    kinds = [
        (n.kind, n.version)
        for version in ("1.20.0", "1.20.0", "1.21.0", "1.20.0", "1.21.0")
        for n in tracker.starting(version, T0)
    ]
    assert kinds == [
        (NotificationKind.ROLLOUT_STARTED, "1.20.0"),
        (NotificationKind.ROLLOUT_STARTED, "1.21.0"),
    ]


def test_a_start_towards_a_version_some_node_runs_is_followed_not_announced() -> None:
    tracker = RolloutTracker()
    tracker.observe({"Idle": 2}, {"1.19.0": 1, "1.20.0": 1}, T0)
    assert tracker.starting("1.20.0", T0) == [], "under way: another replica told it"
    done = tracker.observe({"Idle": 2}, {"1.20.0": 2}, T0)
    assert [(n.kind, n.version) for n in done] == [(NotificationKind.ROLLOUT_FINISHED, "1.20.0")]


def test_a_replica_that_follows_knows_the_rollout_under_way_and_tells_its_finish() -> None:
    tracker = RolloutTracker()
    assert tracker.observe({"Idle": 3}, {"1.19.0": 3}, T0, following=True) == []
    assert tracker.observe({"Idle": 3}, {"1.19.0": 2, "1.20.0": 1}, T0, following=True) == []
    done = tracker.observe({"Idle": 3}, {"1.20.0": 3}, T0)  # it leads now
    assert [(n.kind, n.version) for n in done] == [(NotificationKind.ROLLOUT_FINISHED, "1.20.0")]


def test_a_replica_that_follows_takes_no_version_every_node_runs_for_a_rollout() -> None:
    tracker = RolloutTracker()
    assert tracker.observe({"Idle": 1}, {"1.19.0": 1}, T0, following=True) == []
    assert tracker.observe({"Idle": 1}, {"1.20.0": 1}, T0, following=True) == []
    assert tracker.observe({"Idle": 1}, {"1.20.0": 1}, T0) == []


def test_the_fleet_tracker_tells_paused_halted_and_resumed_once_each() -> None:
    fleet = FleetTracker()
    assert fleet.observe(paused=False, halted=False, now=T0) == []
    assert [n.kind for n in fleet.observe(paused=True, halted=False, now=T0)] == [
        NotificationKind.FLEET_PAUSED
    ]
    assert fleet.observe(paused=True, halted=False, now=T0) == []
    assert [n.kind for n in fleet.observe(paused=False, halted=False, now=T0)] == [
        NotificationKind.FLEET_RESUMED
    ]
    halted = fleet.observe(paused=False, halted=True, now=T0, reason="2 nodes failed")
    assert [n.kind for n in halted] == [NotificationKind.FLEET_HALTED]
    assert halted[0].reason == "2 nodes failed"


def test_a_fleet_paused_when_tracking_began_is_not_announced() -> None:
    fleet = FleetTracker()
    assert fleet.observe(paused=True, halted=False, now=T0) == []


def _every_kind() -> list[Notification]:
    rollout = RolloutTracker()
    rollout.observe({"Idle": 2}, {"1.19.0": 2}, T0)
    started = rollout.starting("1.20.0", T0)
    finished = rollout.observe({"Idle": 2}, {"1.20.0": 2}, T0 + timedelta(seconds=42))
    fleet = FleetTracker()
    fleet.observe(paused=False, halted=False, now=T0)
    paused = fleet.observe(paused=True, halted=False, now=T0)
    resumed = fleet.observe(paused=False, halted=False, now=T0)
    halted = fleet.observe(paused=False, halted=True, now=T0, reason="failures")
    events = [
        from_cluster_event(_event("UpdateCompleted", "Now running 1.20.0"), T0),
        from_cluster_event(_event("UpdateTimedOut", "Did not reach Idle"), T0),
    ]
    blocked = drain_blocked("node-1", ("shop/db-0",), ("shop/db-pdb",), T0)
    made = [*started, *finished, *paused, *resumed, *halted, *events, blocked]
    return [note for note in made if note is not None]


def test_every_kind_in_the_json_format_matches_the_documented_schema() -> None:
    notes = _every_kind()
    assert {n.kind for n in notes} == set(NotificationKind)
    for note in notes:
        body = as_json_v1(note, "prod-eu")
        validate_v1(body)
        assert body["schema"] == SCHEMA_V1
        assert body["cluster"] == "prod-eu"
    blocked = as_json_v1(drain_blocked("n", ("shop/db-0",), ("shop/db-pdb",), T0), "c")
    assert blocked["pods"] == ["shop/db-0"]
    assert blocked["podDisruptionBudgets"] == ["shop/db-pdb"]


def test_the_schema_refuses_a_body_missing_what_its_kind_requires() -> None:
    body = as_json_v1(drain_blocked("n", ("p",), ("b",), T0), "c")
    del body["podDisruptionBudgets"]
    with pytest.raises(jsonschema.ValidationError):
        validate_v1(body)


def test_the_slack_format_is_one_text_line_naming_the_cluster_with_slack_escapes() -> None:
    note = Notification(NotificationKind.NODE_FAILED, T0, "node-1: <broken> & gone", node="n")
    body = as_slack(note, "prod-eu")
    assert set(body) == {"text"}
    assert "*prod-eu*" in body["text"]
    assert "&lt;broken&gt; &amp; gone" in body["text"]


def test_a_notification_bounds_its_summary_and_names() -> None:
    note = drain_blocked("n", tuple(f"ns/p{i}" for i in range(50)), ("ns/b",), T0)
    assert len(note.pods) == 10
    long = Notification(NotificationKind.FLEET_PAUSED, T0, "x" * 5000)
    assert len(long.summary) == 1000


def test_a_rollout_starts_when_the_controller_starts_a_first_node_towards_a_new_version() -> None:
    tracker = RolloutTracker()
    tracker.observe({"Idle": 2}, {"1.19.0": 2}, T0)
    event = ClusterEvent("brs-n", "brupop", "UpdateStarted", "Starting the update to 1.20.0")
    version = started_version(event)
    assert version == "1.20.0"
    started = tracker.starting(version, T0)
    assert [(n.kind, n.version) for n in started] == [(NotificationKind.ROLLOUT_STARTED, "1.20.0")]
    assert started[0].counts == {"nodes": 2, "updated": 0}
    assert tracker.starting("1.20.0", T0) == [], "the second node is the same rollout"
    assert tracker.observe({"Idle": 2}, {"1.19.0": 1, "1.20.0": 1}, T0) == []


def test_agents_reporting_for_the_first_time_or_nodes_joining_on_an_old_version_start_nothing() -> (
    None
):
    tracker = RolloutTracker()
    assert tracker.observe({}, {}, T0) == [], "no agent has reported yet"
    assert tracker.observe({"Idle": 1}, {"1.19.0": 1}, T0) == []
    assert tracker.observe({"Idle": 3}, {"1.19.0": 2, "1.18.0": 1}, T0) == []

"""A real cluster's timeline from the controller's Events and the shadows' spec timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.cli.status.cluster_history import ClusterHistory, ShadowEvent, shadow_event
from brupop.cli.status.cluster_timeline import (
    cluster_timeline,
    limit_of,
    policy_moments,
)
from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.domain.policy.update_policy_status import HaltReason, UpdatePolicyStatus
from brupop.domain.reporting.rollout_timeline import FailureMark, FleetMark, Phase, Span
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState as S

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _shadow(node: str, spec: ShadowSpec, current: str = "1.19.0") -> Shadow:
    status = ShadowStatus(current_version=current, target_version="1.20.0", current_state=S.IDLE)
    return Shadow(name=f"brs-{node}", namespace="ns", node_name=node, node_uid="u", spec=spec,
                  status=status)  # fmt: skip


def test_each_phase_event_starts_its_phase_and_a_failure_is_marked_with_its_message() -> None:
    events = (
        ShadowEvent("node-01", "UpdateStarted", "", _at(0)),
        ShadowEvent("node-01", "UpdateRebooting", "", _at(30)),
        ShadowEvent("node-01", "UpdateMonitoring", "", _at(90)),
        ShadowEvent("node-01", "UpdateCompleted", "", _at(100)),
        ShadowEvent("node-02", "UpdateStarted", "", _at(100)),
        ShadowEvent("node-02", "UpdateTimedOut", "Did not reach it", _at(120)),
        ShadowEvent("node-02", "ShadowRemoved", "not a phase", _at(125)),
    )
    shadows = (_shadow("node-01", ShadowSpec(), "1.20.0"), _shadow("node-02", ShadowSpec()))

    drawn = cluster_timeline(ClusterHistory(shadows, events), _at(150), limit=2)

    assert drawn.start == T0
    first, second = drawn.timeline.rows
    assert first.spans == (
        Span(Phase.STAGING, 0, 30),
        Span(Phase.REBOOT, 30, 90),
        Span(Phase.MONITORING, 90, 100),
        Span(Phase.UPDATED, 100, 150),
    )
    assert second.failures == (FailureMark(120, "Did not reach it"),)
    assert second.spans[-1] == Span(Phase.BACKOFF, 120, 150)


def test_a_preparation_ahead_is_its_own_span_until_staged_or_stopped() -> None:
    events = (
        ShadowEvent("node-01", "UpdatePrestaging", "", _at(0)),
        ShadowEvent("node-01", "UpdateStagedAhead", "", _at(60)),
        ShadowEvent("node-01", "UpdateStarted", "", _at(100)),
        ShadowEvent("node-02", "UpdatePrestaging", "", _at(10)),
        ShadowEvent("node-02", "UpdatePrestageStopped", "", _at(40)),
    )
    shadows = (_shadow("node-01", ShadowSpec()), _shadow("node-02", ShadowSpec()))

    drawn = cluster_timeline(ClusterHistory(shadows, events), _at(120), limit=1)

    first, second = drawn.timeline.rows
    assert first.spans == (
        Span(Phase.STAGING_AHEAD, 0, 60),
        Span(Phase.WAITING, 60, 100),
        Span(Phase.STAGING, 100, 120),
    )
    assert second.spans == (
        Span(Phase.WAITING, 0, 10),
        Span(Phase.STAGING_AHEAD, 10, 40),
        Span(Phase.WAITING, 40, 120),
    )
    assert drawn.timeline.most_in_flight == 1


def test_reboot_hook_events_draw_hook_phases_and_a_hook_failure_is_marked() -> None:
    events = (
        ShadowEvent("node-01", "UpdateStarted", "", _at(0)),
        ShadowEvent("node-01", "BeforeRebootHooks", "", _at(20)),
        ShadowEvent("node-01", "UpdateRebooting", "", _at(30)),
        ShadowEvent("node-01", "UpdateMonitoring", "", _at(90)),
        ShadowEvent("node-01", "AfterRebootHooks", "", _at(95)),
        ShadowEvent("node-01", "RebootHookFailed", "after reboot hook t did not answer", _at(99)),
    )
    shadows = (_shadow("node-01", ShadowSpec(), "1.20.0"),)

    (row,) = cluster_timeline(ClusterHistory(shadows, events), _at(100), limit=1).timeline.rows

    assert [span.phase for span in row.spans] == [
        Phase.STAGING,
        Phase.HOOKS_BEFORE,
        Phase.REBOOT,
        Phase.MONITORING,
        Phase.HOOKS_AFTER,
        Phase.BACKOFF,
    ]
    assert row.failures == (FailureMark(99, "after reboot hook t did not answer"),)


def test_a_shadow_spec_tells_the_current_phase_when_its_event_has_expired() -> None:
    spec = ShadowSpec(state=S.REBOOTED_INTO_UPDATE, state_transition_timestamp=_at(60),
                      version="1.20.0")  # fmt: skip
    history = ClusterHistory((_shadow("node-01", spec),), ())

    drawn = cluster_timeline(history, _at(100), limit=None)

    assert drawn.start == _at(60)
    assert drawn.timeline.rows[0].spans == (Span(Phase.REBOOT, 0, 40),)


def test_with_nothing_recorded_every_node_waits_and_the_timeline_is_empty() -> None:
    drawn = cluster_timeline(ClusterHistory((_shadow("n", ShadowSpec()),), ()), T0, limit=1)
    assert drawn.timeline.rows[0].spans == (Span(Phase.WAITING, 0, 0),)


def test_only_events_about_shadows_with_a_readable_time_are_kept() -> None:
    raw = {
        "involvedObject": {"kind": "BottlerocketShadow", "name": "brs-node-01"},
        "reason": "UpdateStarted",
        "message": "Starting the update to 1.20.0",
        "firstTimestamp": "2026-11-30T08:00:00Z",
    }
    assert shadow_event(raw) == ShadowEvent(
        "node-01", "UpdateStarted", "Starting the update to 1.20.0", T0
    )
    assert shadow_event(raw | {"involvedObject": {"kind": "Pod", "name": "brs-x"}}) is None
    assert shadow_event(raw | {"firstTimestamp": "yesterday"}) is None


def test_the_limit_is_read_from_the_controllers_status() -> None:
    assert limit_of("3") == 3
    assert limit_of("unlimited") is None
    assert limit_of("None") is None  # a controller that did not say


def test_the_policys_halt_is_a_fleet_mark_naming_the_node_and_check() -> None:
    status = UpdatePolicyStatus(
        halted_at=_at(40), halt_reason=HaltReason(node="node-02", check="httpProbe")
    )
    policy = UpdatePolicy("default", "ns", UpdatePolicySpec(), status=status)
    history = ClusterHistory(
        (), (ShadowEvent("n", "UpdateStarted", "", T0),), policy_moments(policy)
    )

    drawn = cluster_timeline(history, _at(60), limit=1)

    assert drawn.timeline.fleet_marks == (FleetMark(40, "fleet halted: node-02 failed httpProbe"),)
    assert policy_moments(None) == ()
    assert policy_moments(UpdatePolicy("default", "ns", UpdatePolicySpec())) == ()


def test_a_health_gate_failure_is_marked_with_its_check_and_the_waiting_nodes_are_halted() -> None:
    status = UpdatePolicyStatus(
        halted_at=_at(40), halt_reason=HaltReason(node="node-02", check="nodeReady")
    )
    policy = UpdatePolicy("default", "ns", UpdatePolicySpec(), status=status)
    message = "health gate failed on nodeReady: the node is not Ready"
    events = (
        ShadowEvent("node-02", "UpdateStarted", "", T0),
        ShadowEvent("node-02", "HealthGateFailed", message, _at(40)),
        ShadowEvent("node-01", "UpdateStarted", "", _at(50)),
    )
    history = ClusterHistory((), events, policy_moments(policy))

    rows = {row.node: row for row in cluster_timeline(history, _at(60), limit=1).timeline.rows}

    assert rows["node-02"].failures == (FailureMark(40, message),)
    assert Phase.BACKOFF not in {span.phase for span in rows["node-02"].spans}
    assert rows["node-01"].spans[:2] == (Span(Phase.WAITING, 0, 40), Span(Phase.HALTED, 40, 50))

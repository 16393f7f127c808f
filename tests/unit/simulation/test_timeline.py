"""The simulated run's timeline: shadow changes and agent exits become the domain's transitions."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.domain.policy.update_policy_status import HaltReason, UpdatePolicyStatus
from brupop.domain.reporting.rollout_timeline import FailureMark, FleetMark, Phase, Span
from brupop.domain.states import UpdateState
from brupop.simulation.fleet.observer import NodeView, NodeViewChange
from brupop.simulation.fleet.supervisor import AgentProcessExit, AgentView, ExitCause
from brupop.simulation.outcome.timeline import (
    halt_marks,
    pause_marks,
    simulated_timeline,
)
from brupop.simulation.scenarios.pause_schedule import PauseMoment

START = 100.0  # time.monotonic() when the run began
IDLE = NodeView(
    "node-01",
    spec_state=UpdateState.IDLE,
    status_state=UpdateState.IDLE,
    current_version="1.19.0",
    target_version="1.20.0",
)


def _changes(*steps: tuple[float, NodeView]) -> list[NodeViewChange]:
    changes, before = [], IDLE
    for at, after in steps:
        changes.append(NodeViewChange(START + at, before, after))
        before = after
    return changes


def _exit(at: float, cause: ExitCause = ExitCause.ON_ITS_OWN, code: int = 0) -> AgentProcessExit:
    return AgentProcessExit(
        pid=1, code=code, peak_rss_kib=1, ran_seconds=1.0, cause=cause, ended_at=at
    )


def _agent(*exits: AgentProcessExit) -> dict[str, AgentView]:
    return {"node-01": AgentView("node-01", True, 2, len(exits) + 1, exits)}


def test_a_preparation_ahead_of_the_nodes_turn_is_its_own_span() -> None:
    preparing = replace(IDLE, preparing_ahead=True)
    history = _changes(
        (5.0, preparing),
        (65.0, IDLE),
        (80.0, replace(IDLE, spec_state=UpdateState.STAGED_AND_PERFORMED_UPDATE)),
    )

    timeline = simulated_timeline(
        ["node-01"], history, {}, started_at=START, ended_at=START + 90, to_version="1.20.0",
        limit=1,
    )  # fmt: skip

    assert timeline.rows[0].spans == (
        Span(Phase.WAITING, 0.0, 5.0),
        Span(Phase.STAGING_AHEAD, 5.0, 65.0),
        Span(Phase.WAITING, 65.0, 80.0),
        Span(Phase.STAGING, 80.0, 90.0),
    )


def test_an_update_goes_through_staging_drain_reboot_and_monitoring() -> None:
    history = _changes(
        (1.0, replace(IDLE, spec_state=UpdateState.STAGED_AND_PERFORMED_UPDATE)),
        (3.0, replace(IDLE, spec_state=UpdateState.REBOOTED_INTO_UPDATE)),
        (6.0, replace(IDLE, spec_state=UpdateState.MONITORING_UPDATE, current_version="1.20.0")),
        (7.0, replace(IDLE, current_version="1.20.0")),
    )
    agents = _agent(_exit(START + 4.0))  # the agent went down with its host's reboot

    timeline = simulated_timeline(
        ["node-01"], history, agents, started_at=START, ended_at=START + 9, to_version="1.20.0",
        limit=1,
    )  # fmt: skip

    assert timeline.rows[0].spans == (
        Span(Phase.WAITING, 0.0, 1.0),
        Span(Phase.STAGING, 1.0, 3.0),
        Span(Phase.DRAIN, 3.0, 4.0),
        Span(Phase.REBOOT, 4.0, 6.0),
        Span(Phase.MONITORING, 6.0, 7.0),
        Span(Phase.UPDATED, 7.0, 9.0),
    )


def test_an_agent_killed_by_the_harness_or_failing_is_not_a_reboot() -> None:
    history = _changes((1.0, replace(IDLE, spec_state=UpdateState.REBOOTED_INTO_UPDATE)))
    agents = _agent(_exit(START + 2.0, ExitCause.CHAOS_SIGKILL, -9), _exit(START + 3.0, code=1))

    timeline = simulated_timeline(
        ["node-01"], history, agents, started_at=START, ended_at=START + 5, to_version="1.20.0",
        limit=1,
    )  # fmt: skip

    assert [span.phase for span in timeline.rows[0].spans] == [Phase.WAITING, Phase.DRAIN]


def test_a_counted_failure_is_marked_with_where_it_happened_and_the_node_backs_off() -> None:
    staging = replace(IDLE, spec_state=UpdateState.STAGED_AND_PERFORMED_UPDATE)
    failed = replace(
        staging, status_state=UpdateState.ERROR_RESET, crash_count=1, failing_since="t"
    )
    history = _changes(
        (1.0, staging),
        (2.0, failed),
        (2.5, replace(failed, spec_state=UpdateState.IDLE, status_state=UpdateState.IDLE)),
    )

    (row,) = simulated_timeline(
        ["node-01"], history, {}, started_at=START, ended_at=START + 4, to_version="1.20.0",
        limit=1,
    ).rows  # fmt: skip

    assert row.failures == (FailureMark(2.0, "agent failed in staging (crash count 1)"),)
    assert row.spans[-1] == Span(Phase.BACKOFF, 2.5, 4.0)


def test_a_timeout_counted_by_the_controller_is_marked_as_a_timeout() -> None:
    draining = replace(IDLE, spec_state=UpdateState.REBOOTED_INTO_UPDATE)
    history = _changes((1.0, draining), (9.0, replace(draining, crash_count=1, failing_since="t")))

    (row,) = simulated_timeline(
        ["node-01"], history, {}, started_at=START, ended_at=START + 10, to_version="1.20.0",
        limit=1,
    ).rows  # fmt: skip

    assert row.failures == (FailureMark(9.0, "timed out in drain (crash count 1)"),)


def test_a_halt_recorded_in_the_policy_status_is_a_fleet_mark_in_seconds_of_the_run() -> None:
    cluster = InMemoryCluster()
    started_on = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    assert halt_marks(cluster.policies, started_on) == []  # no policy object: no halt
    cluster.policies.create(UpdatePolicySpec())
    assert halt_marks(cluster.policies, started_on) == []  # a policy that has not halted
    halted = UpdatePolicyStatus(
        halted_at=started_on + timedelta(seconds=12.5),
        halt_reason=HaltReason(node="node-02", check="nodeReady"),
    )
    cluster.policies.update_status(halted)

    marks = halt_marks(cluster.policies, started_on)

    assert marks == [FleetMark(12.5, "fleet halted: node-02 failed nodeReady")]
    timeline = simulated_timeline(
        ["node-01"], [], {}, started_at=START, ended_at=START + 20, to_version="1.20.0",
        limit=1, fleet_marks=marks,
    )  # fmt: skip
    assert timeline.fleet_marks == tuple(marks)


def test_the_pause_scenarios_writes_are_fleet_marks() -> None:
    moments = [PauseMoment(True, 1.0, 1.2), PauseMoment(False, 3.0, 3.1)]
    assert pause_marks(moments) == [FleetMark(1.2, "fleet paused"), FleetMark(3.1, "fleet resumed")]


def test_a_health_gate_failure_is_labelled_with_the_check_its_event_names() -> None:
    monitoring = replace(IDLE, spec_state=UpdateState.MONITORING_UPDATE)
    failed = replace(IDLE, current_version="1.20.0", crash_count=1, failing_since="t")
    history = _changes((1.0, monitoring), (4.0, failed))
    message = "health gate failed on nodeReady: the node is not Ready"

    timeline = simulated_timeline(
        ["node-01"], history, {}, started_at=START, ended_at=START + 10, to_version="1.20.0",
        limit=1, halted_at=4.0, gate_failures={"node-01": [message]},
    )  # fmt: skip

    (row,) = timeline.rows
    assert row.failures == (FailureMark(4.0, message),)

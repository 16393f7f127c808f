"""The rollout timeline, built from observed transitions."""

from __future__ import annotations

from brupop.domain.reporting.rollout_timeline import (
    MAX_FLEET_MARKS,
    MAX_ROWS,
    FailureMark,
    FleetMark,
    Phase,
    Span,
    Transition,
    build_timeline,
    phase_for,
)
from brupop.domain.states import UpdateState


def _update(node: str, start: float) -> list[Transition]:
    return [
        Transition(node, start, Phase.STAGING),
        Transition(node, start + 2, Phase.DRAIN),
        Transition(node, start + 3, Phase.REBOOT),
        Transition(node, start + 5, Phase.MONITORING),
        Transition(node, start + 6, Phase.UPDATED),
    ]


def test_each_node_row_runs_through_its_phases_from_waiting_to_updated() -> None:
    timeline = build_timeline(["node-01"], _update("node-01", 1.0), end=10.0, limit=1)
    (row,) = timeline.rows
    assert row.spans == (
        Span(Phase.WAITING, 0.0, 1.0),
        Span(Phase.STAGING, 1.0, 3.0),
        Span(Phase.DRAIN, 3.0, 4.0),
        Span(Phase.REBOOT, 4.0, 6.0),
        Span(Phase.MONITORING, 6.0, 7.0),
        Span(Phase.UPDATED, 7.0, 10.0),
    )
    assert row.failures == ()


def test_staging_ahead_is_its_own_span_and_holds_no_slot() -> None:
    transitions = [
        Transition("node-01", 1.0, Phase.STAGING_AHEAD),
        Transition("node-01", 4.0, Phase.WAITING),
        *_update("node-01", 6.0),
    ]
    timeline = build_timeline(["node-01"], transitions, end=14.0, limit=1)
    (row,) = timeline.rows
    assert row.spans[:3] == (
        Span(Phase.WAITING, 0.0, 1.0),
        Span(Phase.STAGING_AHEAD, 1.0, 4.0),
        Span(Phase.WAITING, 4.0, 6.0),
    )
    assert timeline.in_flight[:2] == ((0.0, 0), (6.0, 1))


def test_a_node_never_seen_changing_waits_for_the_whole_run() -> None:
    timeline = build_timeline(["node-01", "node-02"], [], end=4.0, limit=None)
    assert [row.node for row in timeline.rows] == ["node-01", "node-02"]
    assert all(row.spans == (Span(Phase.WAITING, 0.0, 4.0),) for row in timeline.rows)
    assert timeline.in_flight == ((0.0, 0),)


def test_a_failure_is_marked_where_it_happened_and_the_node_backs_off() -> None:
    transitions = [
        Transition("node-02", 1.0, Phase.STAGING),
        Transition("node-02", 2.5, Phase.BACKOFF, failure="agent failed while staging"),
    ]
    (row,) = build_timeline(["node-02"], transitions, end=5.0, limit=1).rows
    assert row.failures == (FailureMark(2.5, "agent failed while staging"),)
    assert row.spans[-1] == Span(Phase.BACKOFF, 2.5, 5.0)


def test_a_failure_without_a_phase_change_only_marks_the_row() -> None:
    transitions = [
        Transition("node-01", 1.0, Phase.DRAIN),
        Transition("node-01", 2.0, failure="drain blocked"),
    ]
    (row,) = build_timeline(["node-01"], transitions, end=3.0, limit=1).rows
    assert row.spans == (Span(Phase.WAITING, 0.0, 1.0), Span(Phase.DRAIN, 1.0, 3.0))
    assert row.failures == (FailureMark(2.0, "drain blocked"),)


def test_transitions_arriving_out_of_order_are_sorted_and_repeats_change_nothing() -> None:
    transitions = [
        Transition("node-01", 3.0, Phase.MONITORING),
        Transition("node-01", 1.0, Phase.STAGING),
        Transition("node-01", 2.0, Phase.STAGING),
    ]
    (row,) = build_timeline(["node-01"], transitions, end=4.0, limit=1).rows
    assert [span.phase for span in row.spans] == [Phase.WAITING, Phase.STAGING, Phase.MONITORING]


def test_moments_outside_the_run_are_clamped_into_it() -> None:
    transitions = [Transition("node-01", -5.0, Phase.STAGING), Transition("n", 99.0, Phase.DRAIN)]
    timeline = build_timeline(["node-01"], transitions, end=10.0, limit=1)
    assert timeline.rows[0].spans == (Span(Phase.STAGING, 0.0, 10.0),)
    assert timeline.rows[1].node == "n"  # a node only a transition names gets its row too
    assert timeline.rows[1].spans == (Span(Phase.WAITING, 0.0, 10.0),)  # no empty span


def test_nodes_in_flight_count_every_phase_but_waiting_backoff_and_updated() -> None:
    transitions = _update("node-01", 0.0) + _update("node-02", 3.0)
    timeline = build_timeline(["node-01", "node-02"], transitions, end=12.0, limit=2)
    assert timeline.in_flight == ((0.0, 1), (3.0, 2), (6.0, 1), (9.0, 0))
    assert timeline.most_in_flight == 2
    assert timeline.limit == 2


def test_rows_beyond_the_limit_are_left_out_and_counted() -> None:
    names = [f"node-{i:04d}" for i in range(MAX_ROWS + 3)]
    timeline = build_timeline(names, [], end=1.0, limit=None)
    assert len(timeline.rows) == MAX_ROWS
    assert timeline.omitted_nodes == 3


def test_a_desired_state_stands_for_its_phase() -> None:
    assert phase_for(UpdateState.STAGED_AND_PERFORMED_UPDATE, on_target=False, failing=False) == (
        Phase.STAGING
    )
    assert phase_for(UpdateState.REBOOTED_INTO_UPDATE, on_target=False, failing=False) == (
        Phase.DRAIN
    )
    assert phase_for(UpdateState.MONITORING_UPDATE, on_target=True, failing=False) == (
        Phase.MONITORING
    )
    assert phase_for(UpdateState.IDLE, on_target=True, failing=False) is Phase.UPDATED
    assert phase_for(UpdateState.IDLE, on_target=False, failing=True) is Phase.BACKOFF
    assert phase_for(UpdateState.IDLE, on_target=False, failing=False) is Phase.WAITING


def test_hook_and_gate_phases_hold_a_slot_like_the_rest_of_the_update() -> None:
    assert Phase.HOOKS_BEFORE.in_flight and Phase.HOOKS_AFTER.in_flight and Phase.GATE.in_flight
    assert not Phase.BACKOFF.in_flight


def test_fleet_marks_are_kept_in_order_inside_the_run_and_bounded() -> None:
    marks = [FleetMark(7.0, "resumed"), FleetMark(-1.0, "paused"), FleetMark(12.0, "halted")]
    timeline = build_timeline(["node-01"], [], end=10.0, limit=1, fleet_marks=marks)
    assert timeline.fleet_marks == (
        FleetMark(0.0, "paused"),
        FleetMark(7.0, "resumed"),
        FleetMark(10.0, "halted"),
    )
    many = [FleetMark(float(i), "paused") for i in range(MAX_FLEET_MARKS + 5)]
    bounded = build_timeline(["node-01"], [], end=100.0, limit=1, fleet_marks=many)
    assert len(bounded.fleet_marks) == MAX_FLEET_MARKS


def test_after_the_fleet_halts_a_waiting_node_is_drawn_halted_not_waiting() -> None:
    transitions = _update("node-01", 1.0)

    timeline = build_timeline(["node-01", "node-02"], transitions, end=10.0, limit=1, halted_at=4.0)

    first, second = timeline.rows
    assert second.spans == (Span(Phase.WAITING, 0.0, 4.0), Span(Phase.HALTED, 4.0, 10.0))
    assert Phase.HALTED not in {span.phase for span in first.spans}, "a node updating finishes"
    assert not Phase.HALTED.in_flight
    assert timeline.most_in_flight == 1


def test_without_a_halt_no_node_is_drawn_halted() -> None:
    timeline = build_timeline(["node-01"], [], end=4.0, limit=None)

    assert timeline.rows[0].spans == (Span(Phase.WAITING, 0.0, 4.0),)

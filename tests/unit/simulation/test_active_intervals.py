"""The report's spans outside Idle: one per departure from Idle, closed when the node is back,
open when the run ended first, in seconds since the run began."""

from __future__ import annotations

from dataclasses import replace

from brupop.domain.states import UpdateState
from brupop.simulation.fleet.observer import (
    MAX_INTERVALS,
    NodeView,
    NodeViewChange,
    active_intervals,
)

START = 50.0
IDLE = NodeView("node-01", spec_state=UpdateState.IDLE, status_state=UpdateState.IDLE)
STAGING = replace(IDLE, spec_state=UpdateState.STAGED_AND_PERFORMED_UPDATE)
STAGED = replace(STAGING, status_state=UpdateState.STAGED_AND_PERFORMED_UPDATE)


def _steps(node: str, *steps: tuple[float, NodeView]) -> list[NodeViewChange]:
    changes, before = [], replace(IDLE, node=node)
    for at, view in steps:
        after = replace(view, node=node)
        changes.append(NodeViewChange(START + at, before, after))
        before = after
    return changes


def test_each_departure_from_idle_opens_a_span_that_the_return_closes() -> None:
    history = _steps("node-01", (1.0, STAGING), (2.0, STAGED), (4.5, IDLE), (6.0, STAGING))
    history += _steps("node-02", (3.0, STAGING), (3.5, IDLE))

    spans = active_intervals(sorted(history, key=lambda c: c.at), START)

    assert spans == {"node-01": [(1.0, 4.5), (6.0, None)], "node-02": [(3.0, 3.5)]}


def test_a_node_that_never_left_idle_has_no_span() -> None:
    history = _steps("node-01", (1.0, replace(IDLE, current_version="1.19.0")))

    assert active_intervals(history, START) == {"node-01": []}


def test_a_node_keeps_at_most_the_bound_of_spans() -> None:
    steps: list[tuple[float, NodeView]] = []
    for index in range(MAX_INTERVALS + 5):
        steps += [(2.0 * index, STAGING), (2.0 * index + 1, IDLE)]

    spans = active_intervals(_steps("node-01", *steps), START)["node-01"]

    assert len(spans) == MAX_INTERVALS
    assert spans[-1] == (2.0 * (MAX_INTERVALS - 1), 2.0 * (MAX_INTERVALS - 1) + 1)

"""The report's waiting reasons: every distinct REASON a node showed while waiting, in the
order first seen, each once, bounded, sampled no faster than the controller's tick."""

from __future__ import annotations

from functools import partial

from brupop.domain.reason import Reason
from brupop.domain.reporting.waiting_reason import NodeReport
from brupop.simulation.outcome.wait_reasons import MAX_WAIT_REASONS, WaitReasons


def _row(node: str, reason: Reason, detail: str) -> NodeReport:
    return NodeReport(
        node=node, shadow=f"brs-{node}", state="Idle", version="1.19.0", target_state="Idle",
        target_version="1.20.0", crash_count=0, reason=reason, detail=detail,
    )  # fmt: skip


def test_each_distinct_reason_is_kept_once_in_the_order_first_seen() -> None:
    waits = WaitReasons(["node-01", "node-02"], every=0.2)
    waits.record([_row("node-01", Reason.BUDGET_FULL, "zone zone-a at 1/1")])
    waits.record(
        [
            _row("node-01", Reason.CONCURRENCY_FULL, "concurrency full (3/3 nodes updating)"),
            _row("node-02", Reason.PINNED, "pinned to 1.19.5"),
        ]
    )
    waits.record([_row("node-01", Reason.BUDGET_FULL, "zone zone-a at 1/1")])

    assert waits.of("node-01") == [
        {"reason": "budget_full", "detail": "zone zone-a at 1/1"},
        {"reason": "concurrency_full", "detail": "concurrency full (3/3 nodes updating)"},
    ]
    assert waits.of("node-02") == [{"reason": "pinned", "detail": "pinned to 1.19.5"}]


def test_rows_of_nodes_updating_and_of_nodes_outside_the_fleet_are_left_out() -> None:
    waits = WaitReasons(["node-01"], every=0.2)
    waits.record(
        [
            _row("node-01", Reason.STARTING, "starting the update"),
            _row("node-01", Reason.UPDATING, "staging"),
            _row("node-99", Reason.PINNED, "pinned to 1.19.5"),
        ]
    )

    assert waits.of("node-01") == []
    assert waits.of("node-99") == []


def test_a_node_keeps_at_most_the_bound_of_distinct_reasons() -> None:
    waits = WaitReasons(["node-01"], every=0.2)
    for count in range(MAX_WAIT_REASONS + 10):
        waits.record([_row("node-01", Reason.BACKING_OFF, f"retry in {count} s")])

    kept = waits.of("node-01")
    assert len(kept) == MAX_WAIT_REASONS
    assert kept[-1]["detail"] == f"retry in {MAX_WAIT_REASONS - 1} s"


def test_a_sample_is_taken_at_most_once_per_tick() -> None:
    waits = WaitReasons(["node-01"], every=0.5)
    asked: list[float] = []

    def rows_at(now: float) -> list[NodeReport]:
        asked.append(now)
        return [_row("node-01", Reason.PINNED, f"pinned at {now}")]

    for now in (10.0, 10.2, 10.49, 10.5, 10.9, 11.0):
        waits.step(partial(rows_at, now), now)

    assert asked == [10.0, 10.5, 11.0]

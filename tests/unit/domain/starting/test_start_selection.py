"""Choosing the starts among the ready nodes: the order the policy asks for (cheapest-first
by eviction cost, ties in the book's order; or by name) and the start rules' holds."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from brupop.domain.reason import Reason
from brupop.domain.starting.start_holds import StartCandidate, StartHold
from brupop.domain.starting.start_selection import BATCH, StartSelection

NOW = datetime(2026, 11, 30, tzinfo=UTC)


class FakeCosts:
    """Eviction costs by node name; unknown nodes have none."""

    def __init__(self, costs: Mapping[str, int]) -> None:
        self._costs = costs

    def cost(self, node_name: str) -> int | None:
        return self._costs.get(node_name)


class HoldNamed:
    """Holds the named nodes; counts the ones started."""

    def __init__(self, *held: str) -> None:
        self.held = set(held)
        self.started_nodes = list[str]()

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        if candidate.node_name in self.held:
            return StartHold(Reason.PINNED, "pinned to 1.19.0")
        return None

    def started(self, candidate: StartCandidate) -> None:
        self.started_nodes.append(candidate.node_name)


def _candidate(shadow: str) -> StartCandidate:
    return StartCandidate(shadow, shadow.removeprefix("brs-"), "1.20.0", None)


def _ready(*nodes: str) -> list[str]:
    return [f"brs-{n}" for n in nodes]


def test_without_rules_or_costs_the_first_ready_nodes_start() -> None:
    selection = StartSelection((), _candidate, NOW)
    assert selection(_ready("a", "b", "c"), 2) == _ready("a", "b")


def test_cheapest_first_starts_the_nodes_whose_drain_evicts_least() -> None:
    costs = FakeCosts({"a": 6, "b": 0, "c": 2, "d": 4})
    selection = StartSelection((), _candidate, NOW, costs=costs)
    assert selection(_ready("a", "b", "c", "d"), 2) == _ready("b", "c")


def test_equal_costs_keep_the_books_order_by_name() -> None:
    costs = FakeCosts({"a": 3, "b": 1, "c": 1, "d": 1})
    selection = StartSelection((), _candidate, NOW, costs=costs)
    assert selection(_ready("a", "b", "c", "d"), 4) == _ready("b", "c", "d", "a")


def test_an_unknown_cost_counts_as_zero() -> None:
    selection = StartSelection((), _candidate, NOW, costs=FakeCosts({"a": 1, "b": 5}))
    assert selection(_ready("a", "b", "c"), 1) == _ready("c")


def test_the_controllers_node_stays_last_however_cheap() -> None:
    costs = FakeCosts({"a": 9, "b": 9, "ctl": 0})
    selection = StartSelection((), _candidate, NOW, costs=costs, controller_node="ctl")
    assert selection(_ready("a", "b", "ctl"), 3) == _ready("a", "b", "ctl")


def test_order_by_name_ignores_costs_when_none_are_given() -> None:
    selection = StartSelection((HoldNamed(),), _candidate, NOW)
    assert selection(_ready("a", "b", "c"), 2) == _ready("a", "b")


def test_a_held_node_is_skipped_and_its_hold_kept() -> None:
    rule = HoldNamed("a")
    selection = StartSelection((rule,), _candidate, NOW)
    assert selection(_ready("a", "b", "c"), 1) == _ready("b")
    assert selection.holds == {"brs-a": StartHold(Reason.PINNED, "pinned to 1.19.0")}
    assert rule.started_nodes == ["b"]


def test_nodes_past_the_first_batch_are_tried_when_the_first_are_all_held() -> None:
    names = [f"n{i:03d}" for i in range(BATCH + 5)]
    selection = StartSelection((HoldNamed(*names[: BATCH + 2]),), _candidate, NOW)
    assert selection(_ready(*names), 2) == _ready(*names[BATCH + 2 : BATCH + 4])
    assert len(selection.holds) == BATCH + 2

"""Budgets: a group per label value (unlabelled nodes apart), a count or a percentage of the
group, nodes in use from the slots held plus those started in the pass, and the REASON text."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.scheduling_policy import Budget
from brupop.domain.reason import Reason
from brupop.domain.starting.budget_rule import (
    BudgetRule,
    BudgetUse,
    group_of,
    group_sizes,
    short_name,
)
from brupop.domain.starting.start_holds import StartCandidate, StartHold

ZONE = "topology.kubernetes.io/zone"
NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _node(name: str, zone: str | None) -> Node:
    return Node(name, f"uid-{name}", labels={ZONE: zone} if zone else {})


def _candidate(node: Node) -> StartCandidate:
    return StartCandidate(f"brs-{node.name}", node.name, "1.20.0", node)


def _zone_budget(limit: int | str) -> Budget:
    return Budget.model_validate({"groupBy": ZONE, "maxConcurrent": limit})


def test_a_budget_is_named_by_the_last_segment_of_its_label_key() -> None:
    assert short_name(ZONE) == "zone"
    assert short_name("eks.amazonaws.com/nodegroup") == "nodegroup"
    assert short_name("team") == "team"


def test_nodes_without_the_label_form_a_group_of_their_own() -> None:
    nodes = [_node("a", "us-east-1a"), _node("b", None), _node("c", None)]
    assert group_of(nodes[1], ZONE) == "(no topology.kubernetes.io/zone)"
    assert group_of(None, ZONE) == "(no topology.kubernetes.io/zone)"
    assert group_sizes(nodes, ZONE) == {"us-east-1a": 1, "(no topology.kubernetes.io/zone)": 2}


def test_a_full_group_holds_its_nodes_with_the_budget_group_and_count() -> None:
    busy, waiting = _node("a", "us-east-1a"), _node("b", "us-east-1a")
    rule = BudgetRule(_zone_budget(1), {"us-east-1a": 2}, [busy])
    assert rule.hold(_candidate(waiting), NOW) == StartHold(
        Reason.BUDGET_FULL, "zone us-east-1a at 1/1"
    )


def test_another_group_is_not_held_by_a_full_one() -> None:
    rule = BudgetRule(
        _zone_budget(1), {"us-east-1a": 2, "us-east-1b": 2}, [_node("a", "us-east-1a")]
    )
    assert rule.hold(_candidate(_node("c", "us-east-1b")), NOW) is None


def test_a_node_started_in_the_pass_counts_against_its_group() -> None:
    rule = BudgetRule(_zone_budget(2), {"us-east-1a": 5}, [_node("a", "us-east-1a")])
    second = _node("b", "us-east-1a")
    assert rule.hold(_candidate(second), NOW) is None
    rule.started(_candidate(second))
    hold = rule.hold(_candidate(_node("c", "us-east-1a")), NOW)
    assert hold is not None and hold.detail == "zone us-east-1a at 2/2"


def test_a_percentage_is_of_the_groups_nodes_rounded_down() -> None:
    sizes = {"big": 10, "small": 3}
    rule = BudgetRule(_zone_budget("25%"), sizes, [_node("a", "big"), _node("b", "big")])
    assert rule.limit("big") == 2  # 2.5 rounded down
    hold = rule.hold(_candidate(_node("c", "big")), NOW)
    assert hold is not None and hold.detail == "zone big at 2/2"


def test_a_percentage_of_a_small_group_allows_at_least_one() -> None:
    rule = BudgetRule(_zone_budget("10%"), {"small": 3}, [])
    assert rule.limit("small") == 1
    assert rule.hold(_candidate(_node("a", "small")), NOW) is None


def test_the_unlabelled_group_has_a_budget_of_its_own() -> None:
    unlabelled = "(no topology.kubernetes.io/zone)"
    rule = BudgetRule(_zone_budget(1), {unlabelled: 2, "us-east-1a": 1}, [_node("a", None)])
    hold = rule.hold(_candidate(_node("b", None)), NOW)
    assert hold is not None and hold.detail == f"zone {unlabelled} at 1/1"
    assert rule.hold(_candidate(_node("c", "us-east-1a")), NOW) is None


def test_usage_lists_every_group_with_its_nodes_in_use_and_limit() -> None:
    rule = BudgetRule(_zone_budget("50%"), {"a": 4, "b": 2}, [_node("x", "a")])
    assert rule.usage() == [BudgetUse(ZONE, "a", 1, 2), BudgetUse(ZONE, "b", 0, 1)]

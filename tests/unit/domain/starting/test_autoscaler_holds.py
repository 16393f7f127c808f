"""Start rules that hold nodes an autoscaler removes, young nodes and nodes with blocking pods."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from brupop.domain.cluster.label_selector import parse_label_selector
from brupop.domain.cluster.objects import Node, Pod, PodPhase, Taint
from brupop.domain.policy.scheduling_policy import SchedulingPolicy
from brupop.domain.reason import Reason
from brupop.domain.starting.autoscaler_holds import (
    AutoscalerRemovalRule,
    BlockingPodRule,
    NodeAgeRule,
    autoscaler_rules,
    span,
)
from brupop.domain.starting.start_holds import StartCandidate, choose_starts

NOW = datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)
DO_NOT_DISRUPT = {"karpenter.sh/do-not-disrupt": "true"}


def _candidate(node: Node | None, name: str = "node-01") -> StartCandidate:
    return StartCandidate(f"brs-{name}", name, "1.20.0", node)


def _node(name: str = "node-01", **fields: object) -> Node:
    return Node(name=name, uid=f"uid-{name}", **fields)  # type: ignore[arg-type]


def _pod(name: str, namespace: str = "default", **fields: object) -> Pod:
    return Pod(name=name, namespace=namespace, uid=f"uid-{name}", node_name="node-01", **fields)  # type: ignore[arg-type]


class _Pods:
    def __init__(self, pods: dict[str, Sequence[Pod] | None]) -> None:
        self.pods = pods
        self.asked: list[str] = []

    def __call__(self, node_name: str) -> Sequence[Pod] | None:
        self.asked.append(node_name)
        return self.pods.get(node_name, ())


# --- nodes being removed -----------------------------------------------------------------


def test_a_node_tainted_by_the_cluster_autoscaler_is_held_as_being_removed() -> None:
    node = _node(taints=(Taint("ToBeDeletedByClusterAutoscaler", "1700000000", "NoSchedule"),))
    hold = AutoscalerRemovalRule().hold(_candidate(node), NOW)
    assert hold is not None
    assert hold.reason is Reason.AUTOSCALER
    assert hold.detail == "being removed by the cluster autoscaler"


def test_a_node_karpenter_is_disrupting_is_held() -> None:
    node = _node(taints=(Taint("karpenter.sh/disrupted", "", "NoSchedule"),))
    hold = AutoscalerRemovalRule().hold(_candidate(node), NOW)
    assert hold is not None and hold.reason is Reason.AUTOSCALER
    assert "Karpenter" in hold.detail


def test_a_node_being_deleted_is_held() -> None:
    hold = AutoscalerRemovalRule().hold(_candidate(_node(deleting=True)), NOW)
    assert hold is not None and hold.reason is Reason.AUTOSCALER
    assert hold.detail == "node is being deleted"


def test_a_node_with_other_taints_is_not_held_as_being_removed() -> None:
    node = _node(taints=(Taint("dedicated", "gpu", "NoSchedule"),))
    assert AutoscalerRemovalRule().hold(_candidate(node), NOW) is None
    assert AutoscalerRemovalRule().hold(_candidate(None), NOW) is None


# --- node age ----------------------------------------------------------------------------


def test_a_node_younger_than_the_minimum_age_waits_saying_how_old_it_is() -> None:
    node = _node(created_at=NOW - timedelta(minutes=3, seconds=20))
    hold = NodeAgeRule(600).hold(_candidate(node), NOW)
    assert hold is not None and hold.reason is Reason.NODE_TOO_YOUNG
    assert hold.detail == "node is 3m old; starts after 10m"
    assert hold.until == NOW + timedelta(minutes=6, seconds=40)  # when the hold lifts


def test_a_node_as_old_as_the_minimum_age_starts() -> None:
    node = _node(created_at=NOW - timedelta(minutes=10))
    assert NodeAgeRule(600).hold(_candidate(node), NOW) is None


def test_a_minimum_age_of_zero_never_holds_a_node() -> None:
    assert NodeAgeRule(0).hold(_candidate(_node(created_at=NOW)), NOW) is None


def test_a_node_whose_creation_is_unknown_is_not_held_for_its_age() -> None:
    assert NodeAgeRule(600).hold(_candidate(_node(created_at=None)), NOW) is None


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (59.9, "59s"), (60, "1m"), (3599, "59m"), (3600, "1h"), (7500, "2h5m"),
     (86400, "1d"), (3 * 86400 + 4 * 3600 + 59, "3d4h")],
)  # fmt: skip
def test_durations_read_as_people_say_them(seconds: float, text: str) -> None:
    assert span(seconds) == text


# --- blocking pods -----------------------------------------------------------------------


def test_a_node_running_a_do_not_disrupt_pod_waits_and_the_pod_is_named() -> None:
    pods = _Pods({"node-01": [_pod("web-1"), _pod("db-0", annotations=DO_NOT_DISRUPT)]})
    hold = BlockingPodRule(pods).hold(_candidate(_node()), NOW)
    assert hold is not None and hold.reason is Reason.BLOCKING_POD
    assert hold.detail == "pod default/db-0 has karpenter.sh/do-not-disrupt"


def test_a_do_not_disrupt_annotation_other_than_true_does_not_block() -> None:
    pods = _Pods({"node-01": [_pod("db-0", annotations={"karpenter.sh/do-not-disrupt": "no"})]})
    assert BlockingPodRule(pods).hold(_candidate(_node()), NOW) is None


def test_finished_and_terminating_pods_do_not_block() -> None:
    pods = _Pods(
        {
            "node-01": [
                _pod("job-1", phase=PodPhase.SUCCEEDED, annotations=DO_NOT_DISRUPT),
                _pod("old-0", terminating=True, annotations=DO_NOT_DISRUPT),
            ]
        }
    )
    assert BlockingPodRule(pods).hold(_candidate(_node()), NOW) is None


def test_a_node_running_a_pod_the_blocking_selector_matches_waits_naming_it() -> None:
    pods = _Pods({"node-01": [_pod("web-1", labels={"app": "web"}),
                              _pod("etl-7", "batch", labels={"app": "etl"})]})  # fmt: skip
    rule = BlockingPodRule(pods, parse_label_selector("app in (etl,ml)"))
    hold = rule.hold(_candidate(_node()), NOW)
    assert hold is not None and hold.reason is Reason.BLOCKING_POD
    assert hold.detail == "pod batch/etl-7 matches blockingPodSelector 'app in (etl,ml)'"


def test_a_node_whose_pods_the_selector_does_not_match_starts() -> None:
    pods = _Pods({"node-01": [_pod("web-1", labels={"app": "web"})]})
    assert (
        BlockingPodRule(pods, parse_label_selector("app=etl")).hold(_candidate(_node()), NOW)
        is None
    )


def test_a_node_whose_pods_cannot_be_read_waits() -> None:
    hold = BlockingPodRule(_Pods({"node-01": None})).hold(_candidate(_node()), NOW)
    assert hold is not None and hold.reason is Reason.BLOCKING_POD
    assert "could not be read" in hold.detail


# --- together ----------------------------------------------------------------------------


def test_the_policys_rules_hold_the_blocked_nodes_and_start_the_others_reading_pods_last() -> None:
    nodes = {
        "node-01": _node("node-01", taints=(Taint("ToBeDeletedByClusterAutoscaler"),)),
        "node-02": _node("node-02", created_at=NOW - timedelta(seconds=30)),
        "node-03": _node("node-03", created_at=NOW - timedelta(hours=1)),
        "node-04": _node("node-04", created_at=NOW - timedelta(hours=1)),
    }
    pods = _Pods({"node-03": [_pod("db-0", annotations=DO_NOT_DISRUPT)]})
    scheduling = SchedulingPolicy(min_node_age_seconds=300, blocking_pod_selector="app=etl")
    rules = autoscaler_rules(scheduling, pods)
    candidates = [_candidate(node, name) for name, node in nodes.items()]
    choice = choose_starts(candidates, 3, rules, NOW)
    assert [c.node_name for c in choice.starts] == ["node-04"]
    assert {s: h.reason for s, h in choice.holds.items()} == {
        "brs-node-01": Reason.AUTOSCALER,
        "brs-node-02": Reason.NODE_TOO_YOUNG,
        "brs-node-03": Reason.BLOCKING_POD,
    }
    assert pods.asked == ["node-03", "node-04"], "pods are read only past the cheaper rules"

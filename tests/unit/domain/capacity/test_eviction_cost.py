"""A drain's cost: the pods it would evict, those behind a PodDisruptionBudget counting double."""

from __future__ import annotations

from brupop.domain.capacity.eviction_cost import (
    budgets_by_namespace,
    evicted_by_drain,
    eviction_cost,
)
from brupop.domain.cluster.objects import (
    MIRROR_POD_ANNOTATION,
    OwnerReference,
    Pod,
    PodDisruptionBudget,
    PodPhase,
)

DAEMON_SET = (OwnerReference("DaemonSet", "agent", controller=True),)
REPLICA_SET = (OwnerReference("ReplicaSet", "web-5d9", controller=True),)


def _pod(name: str, namespace: str = "shop", **extra: object) -> Pod:
    return Pod(name=name, namespace=namespace, uid=name, node_name="n1", **extra)  # type: ignore[arg-type]


def test_a_drain_evicts_workloads_but_not_daemonset_mirror_finished_or_leaving_pods() -> None:
    pods = [
        _pod("web-b", owners=REPLICA_SET),
        _pod("agent", owners=DAEMON_SET),
        _pod("etcd", annotations={MIRROR_POD_ANNOTATION: "x"}),
        _pod("report", phase=PodPhase.SUCCEEDED),
        _pod("crashed", phase=PodPhase.FAILED),
        _pod("going", terminating=True),
        _pod("web-a", namespace="a-team"),
    ]

    assert [(p.namespace, p.name) for p in evicted_by_drain(pods)] == [
        ("a-team", "web-a"),
        ("shop", "web-b"),
    ]


def test_an_empty_node_and_a_node_of_daemonset_pods_cost_nothing() -> None:
    assert eviction_cost([], {}) == 0
    assert eviction_cost([_pod("agent", owners=DAEMON_SET)], {}) == 0


def test_each_evicted_pod_costs_one_and_one_behind_a_budget_costs_two() -> None:
    budgets = budgets_by_namespace(
        [PodDisruptionBudget("db-pdb", "shop", selector={"app": "db"}, min_available=1)]
    )
    pods = [_pod("db-0", labels={"app": "db"}), _pod("web-0", labels={"app": "web"})]

    assert eviction_cost(pods, budgets) == 3


def test_a_budget_of_another_namespace_does_not_weigh_on_a_pod() -> None:
    budgets = budgets_by_namespace(
        [PodDisruptionBudget("db-pdb", "other", selector={"app": "db"}, min_available=1)]
    )

    assert eviction_cost([_pod("db-0", labels={"app": "db"})], budgets) == 1


def test_a_pod_selected_by_two_budgets_still_costs_two() -> None:
    budgets = budgets_by_namespace(
        [
            PodDisruptionBudget("a", "shop", selector={"app": "db"}, min_available=1),
            PodDisruptionBudget("b", "shop", selector={}, max_unavailable=1),
        ]
    )

    assert eviction_cost([_pod("db-0", labels={"app": "db"})], budgets) == 2


def test_a_daemonset_pod_behind_a_budget_costs_nothing() -> None:
    budgets = budgets_by_namespace([PodDisruptionBudget("all", "shop", min_available=1)])

    assert eviction_cost([_pod("agent", owners=DAEMON_SET)], budgets) == 0

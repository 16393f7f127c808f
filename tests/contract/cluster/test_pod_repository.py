"""PodRepository behaviour, the same for the in-memory cluster and for Kubernetes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from brupop.adapters.kubernetes.resources.pods import PAGE_SIZE
from brupop.domain.cluster.objects import OwnerReference, PodPhase, Resources, Toleration
from brupop.ports.errors import NotFoundError, TooManyRequestsError
from tests.contract.cluster.conftest import Backend, Ports

DAEMONSET = OwnerReference(kind="DaemonSet", name="brupop-agent", controller=True)


def test_list_on_node_returns_that_nodes_pods_in_every_namespace(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    backend.add_node("node-b")
    backend.add_pod("default", "web-1", "node-a", labels={"app": "web"})
    backend.add_pod("kube-system", "agent-a", "node-a", owners=[DAEMONSET])
    backend.add_pod("default", "web-2", "node-b")

    on_a = cluster.pods.list_on_node("node-a")

    assert sorted((p.namespace, p.name) for p in on_a) == [
        ("default", "web-1"),
        ("kube-system", "agent-a"),
    ]


def test_pod_fields_are_read_as_drain_and_authorization_need_them(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    added = backend.add_pod(
        "brupop-bottlerocket-aws",
        "agent-x9x5c",
        "node-a",
        labels={"brupop.bottlerocket.aws/component": "agent"},
        owners=[DAEMONSET],
        phase=PodPhase.SUCCEEDED,
        annotations={"kubernetes.io/config.mirror": "abc"},
        service_account="brupop-agent-service-account",
    )

    pod = cluster.pods.get("brupop-bottlerocket-aws", "agent-x9x5c")

    assert pod.uid == added.uid and pod.uid
    assert pod.node_name == "node-a"
    assert pod.phase is PodPhase.SUCCEEDED
    assert pod.labels == {"brupop.bottlerocket.aws/component": "agent"}
    assert pod.annotations == {"kubernetes.io/config.mirror": "abc"}
    assert pod.owners == (DAEMONSET,)
    assert pod.service_account == "brupop-agent-service-account"
    assert pod.terminating is False


def test_a_pod_a_finalizer_holds_after_its_delete_is_read_with_its_deletion_timestamp(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("n1")
    backend.add_pod("ns", "held", "n1")
    ends = datetime(2026, 1, 5, 10, 0, 30, tzinfo=UTC)

    backend.set_pod_deleting("ns", "held", ends)
    pod = cluster.pods.get("ns", "held")

    assert (pod.terminating, pod.deletion_timestamp) == (True, ends)


def test_missing_pod_is_not_found(cluster: Ports) -> None:
    with pytest.raises(NotFoundError):
        cluster.pods.get("default", "ghost")
    with pytest.raises(NotFoundError):
        cluster.pods.evict("default", "ghost")
    with pytest.raises(NotFoundError):
        cluster.pods.delete("default", "ghost")


def test_eviction_removes_the_pod(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a")
    backend.add_pod("default", "web-1", "node-a")

    cluster.pods.evict("default", "web-1")

    with pytest.raises(NotFoundError):
        cluster.pods.get("default", "web-1")
    assert cluster.pods.list_on_node("node-a") == []


def test_eviction_a_budget_refuses_is_too_many_requests_and_keeps_the_pod(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    backend.add_pod("default", "db-0", "node-a", labels={"app": "db"})
    backend.add_pod("default", "db-1", "node-a", labels={"app": "db"})
    backend.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=2)

    with pytest.raises(TooManyRequestsError):
        cluster.pods.evict("default", "db-0")

    assert cluster.pods.get("default", "db-0").name == "db-0"


def test_eviction_a_budget_allows_goes_through(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a")
    backend.add_pod("default", "db-0", "node-a", labels={"app": "db"})
    backend.add_pod("default", "db-1", "node-a", labels={"app": "db"})
    backend.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=1)

    cluster.pods.evict("default", "db-0")

    assert [p.name for p in cluster.pods.list_on_node("node-a")] == ["db-1"]


def test_a_budget_with_only_match_expressions_guards_only_the_pods_they_match(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    backend.add_pod("default", "db-0", "node-a", labels={"app": "db"})
    backend.add_pod("default", "web-0", "node-a", labels={"app": "web"})
    expressions = [{"key": "app", "operator": "In", "values": ["db"]}]
    spec = {"selector": {"matchExpressions": expressions}, "minAvailable": 1}
    backend.add_budget_spec("default", "db-budget", spec)

    cluster.pods.evict("default", "web-0")
    with pytest.raises(TooManyRequestsError):
        cluster.pods.evict("default", "db-0")

    (budget,) = cluster.pods.list_disruption_budgets("default")
    assert budget.selects(cluster.pods.get("default", "db-0"))


@pytest.mark.parametrize(
    ("max_unavailable", "evictions_allowed"), [("50%", 2), ("25%", 1), ("0%", 0), (1, 1)]
)
def test_a_percentage_max_unavailable_is_scaled_over_the_pods_and_rounded_up(
    backend: Backend, cluster: Ports, max_unavailable: int | str, evictions_allowed: int
) -> None:
    backend.add_node("node-a")
    for index in range(3):
        backend.add_pod("default", f"db-{index}", "node-a", labels={"app": "db"})
    spec = {"selector": {"matchLabels": {"app": "db"}}, "maxUnavailable": max_unavailable}
    backend.add_budget_spec("default", "db-budget", spec)

    evicted = 0
    for index in range(3):
        try:
            cluster.pods.evict("default", f"db-{index}")
        except TooManyRequestsError:
            break
        evicted += 1
        backend.add_pod(  # the replacement is not ready yet: it counts as unavailable
            "default", f"db-{index}-new", "node-a", labels={"app": "db"}, phase=PodPhase.PENDING
        )

    assert evicted == evictions_allowed
    (budget,) = cluster.pods.list_disruption_budgets("default")
    assert budget.max_unavailable == max_unavailable


def test_an_eviction_carries_the_grace_period_it_was_given(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    backend.add_pod("default", "web-1", "node-a")
    backend.add_pod("default", "web-2", "node-a")

    cluster.pods.evict("default", "web-1", grace_period_seconds=7)
    cluster.pods.evict("default", "web-2")

    assert backend.eviction_grace_periods() == {"default/web-1": 7, "default/web-2": None}
    assert cluster.pods.list_on_node("node-a") == []


def test_delete_removes_the_pod(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a")
    backend.add_pod("default", "job-1", "node-a", phase=PodPhase.FAILED)

    cluster.pods.delete("default", "job-1")

    with pytest.raises(NotFoundError):
        cluster.pods.get("default", "job-1")


def test_disruption_budgets_are_listed_per_namespace(backend: Backend, cluster: Ports) -> None:
    backend.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=1)
    backend.add_disruption_budget("other", "web-budget", {"app": "web"}, min_available=1)

    (budget,) = cluster.pods.list_disruption_budgets("default")

    assert (budget.namespace, budget.name) == ("default", "db-budget")
    assert budget.selector == {"app": "db"}
    assert (budget.min_available, budget.max_unavailable) == (1, None)


def test_pod_scheduling_fields_are_read_as_the_capacity_check_needs_them(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    tolerations = (
        Toleration("dedicated", "Equal", "db", "NoSchedule"),
        Toleration("", "Exists", "", ""),
    )
    backend.add_pod(
        "default",
        "db-0",
        "node-a",
        requests=Resources(cpu_millis=1500, memory_bytes=512 * 1024**2),
        node_selector={"disk": "ssd"},
        tolerations=tolerations,
    )
    backend.add_pod("default", "idle", "node-a")

    pod = cluster.pods.get("default", "db-0")
    idle = cluster.pods.get("default", "idle")

    assert pod.requests == Resources(cpu_millis=1500, memory_bytes=512 * 1024**2)
    assert pod.requests_known
    assert pod.node_selector == {"disk": "ssd"}
    assert pod.tolerations == tolerations
    assert (idle.requests, idle.node_selector, idle.tolerations) == (Resources(), {}, ())


def test_list_all_returns_every_unfinished_pod_of_every_node_and_namespace(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    backend.add_node("node-b")
    backend.add_pod("default", "web-1", "node-a")
    backend.add_pod("kube-system", "agent-b", "node-b", owners=[DAEMONSET])
    backend.add_pod("default", "starting", "node-b", phase=PodPhase.PENDING)
    backend.add_pod("jobs", "done", "node-a", phase=PodPhase.SUCCEEDED)
    backend.add_pod("jobs", "crashed", "node-b", phase=PodPhase.FAILED)

    everything = cluster.pods.list_all()

    assert sorted((p.namespace, p.name, p.node_name) for p in everything) == [
        ("default", "starting", "node-b"),
        ("default", "web-1", "node-a"),
        ("kube-system", "agent-b", "node-b"),
    ]


def test_list_all_reads_past_one_page(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a")
    for index in range(PAGE_SIZE + 3):
        backend.add_pod("default", f"web-{index:04}", "node-a")

    everything = cluster.pods.list_all()

    assert len({pod.name for pod in everything}) == PAGE_SIZE + 3


def test_disruption_budgets_of_every_namespace_are_listed(backend: Backend, cluster: Ports) -> None:
    backend.add_disruption_budget("default", "db-budget", {"app": "db"}, min_available=1)
    backend.add_disruption_budget("other", "web-budget", {"app": "web"}, min_available=2)

    budgets = cluster.pods.list_all_disruption_budgets()

    assert sorted((b.namespace, b.name, b.min_available) for b in budgets) == [
        ("default", "db-budget", 1),
        ("other", "web-budget", 2),
    ]

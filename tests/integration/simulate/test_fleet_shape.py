"""The simulated fleet takes the shape its flags give: zone labels, workload pods per node with
requests on nodes with allocatable, and do-not-disrupt pods that a drain would have to evict."""

from __future__ import annotations

from pathlib import Path

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.cli.fleet_description.fleet_shape import ZONE_LABEL, FleetShape, PodCounts
from brupop.cli.fleet_description.nodes import (
    DO_NOT_DISRUPT,
    NODE_ALLOCATABLE,
    POD_REQUESTS,
    WORKLOAD_NAMESPACE,
    build_fleet,
    do_not_disrupt_pod,
)
from brupop.domain.cluster.objects import Resources

NAMES = ["node-01", "node-02", "node-03", "node-04"]


def _workload(cluster: InMemoryCluster, node: str) -> list[str]:
    return sorted(
        pod.name
        for pod in cluster.pods.list_on_node(node)
        if not any(owner.kind == "DaemonSet" for owner in pod.owners)
    )


def test_zones_label_the_nodes_round_robin(tmp_path: Path) -> None:
    cluster = InMemoryCluster()
    build_fleet(cluster, NAMES, tmp_path, shape=FleetShape(zones=3))

    zones = [cluster.nodes.get(name).labels.get(ZONE_LABEL) for name in NAMES]
    assert zones == ["zone-a", "zone-b", "zone-c", "zone-a"]


def test_without_zones_no_node_has_a_zone_label(tmp_path: Path) -> None:
    cluster = InMemoryCluster()
    build_fleet(cluster, NAMES, tmp_path)

    assert all(ZONE_LABEL not in cluster.nodes.get(name).labels for name in NAMES)


def test_pods_per_node_replace_the_standard_workloads_with_replicaset_pods(
    tmp_path: Path,
) -> None:
    cluster = InMemoryCluster()
    pods = PodCounts(named=(("node-01", 3), ("node-02", 0)), default=1)
    build_fleet(cluster, NAMES, tmp_path, shape=FleetShape(pods=pods))

    assert [len(_workload(cluster, name)) for name in NAMES] == [3, 0, 1, 1]
    for pod in cluster.pods.list_on_node("node-01"):
        if pod.namespace == WORKLOAD_NAMESPACE:
            assert [owner.kind for owner in pod.owners] == ["ReplicaSet"]
            assert pod.requests == POD_REQUESTS
    assert cluster.pods.list_all_disruption_budgets() == []


def test_every_node_has_allocatable_and_every_workload_pod_requests(tmp_path: Path) -> None:
    cluster = InMemoryCluster()
    build_fleet(cluster, NAMES, tmp_path, blocked_drains=["node-02"])

    assert all(cluster.nodes.get(name).allocatable == NODE_ALLOCATABLE for name in NAMES)
    workload = [p for p in cluster.pods.list_all() if p.namespace == WORKLOAD_NAMESPACE]
    assert len(workload) == len(NAMES) + 2 + 1  # web on each, cache on every other, pinned
    assert all(pod.requests == POD_REQUESTS for pod in workload)
    assert Resources(cpu_millis=100, memory_bytes=128 * 1024**2) == POD_REQUESTS


def test_a_do_not_disrupt_pod_runs_annotated_on_its_node(tmp_path: Path) -> None:
    cluster = InMemoryCluster()
    shape = FleetShape(pods=PodCounts(default=0), do_not_disrupt=("node-03",))
    build_fleet(cluster, NAMES, tmp_path, shape=shape)

    assert _workload(cluster, "node-03") == [do_not_disrupt_pod("node-03")]
    pod = cluster.pods.get(WORKLOAD_NAMESPACE, do_not_disrupt_pod("node-03"))
    assert pod.annotations == {DO_NOT_DISRUPT: "true"}
    assert [owner.kind for owner in pod.owners] == ["ReplicaSet"]
    assert all(_workload(cluster, name) == [] for name in NAMES if name != "node-03")

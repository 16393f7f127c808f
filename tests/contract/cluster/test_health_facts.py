"""What the health gate reads from the cluster, the same on the in-memory cluster and over the
Kubernetes API: Node Ready and InternalIP, Pod Ready, workloads' ready replicas, and the
evicted-workloads record kept in a Node annotation."""

from __future__ import annotations

from brupop.domain.cluster.objects import OwnerReference
from brupop.domain.safety.evicted_workloads import (
    EVICTED_WORKLOADS_ANNOTATION,
    WorkloadRef,
    encode_record,
    record_on,
)
from brupop.domain.safety.gate_checks import daemon_set_pods_ready, node_ready
from brupop.domain.safety.health_gate import CheckOutcome
from tests.contract.cluster.conftest import Backend, Ports

DAEMONSET = OwnerReference(kind="DaemonSet", name="brupop-agent", controller=True)
WEB = WorkloadRef("ReplicaSet", "default", "web-7d9f")
DB = WorkloadRef("StatefulSet", "data", "db")


def test_node_ready_condition_and_internal_ip_are_read(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a", internal_ip="10.0.0.7")
    backend.add_node("node-b", ready=False)

    a, b = cluster.nodes.get("node-a"), cluster.nodes.get("node-b")

    assert (a.ready, a.internal_ip) == (True, "10.0.0.7")
    assert (b.ready, b.internal_ip) == (False, None)
    assert node_ready(b).outcome is CheckOutcome.PENDING


def test_node_turning_ready_is_seen(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a", ready=False)

    backend.set_node_ready("node-a", True)

    assert node_ready(cluster.nodes.get("node-a")).outcome is CheckOutcome.PASSED


def test_daemon_set_pods_readiness_is_read_per_node(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a")
    backend.add_pod("kube-system", "agent-a", "node-a", owners=[DAEMONSET])
    backend.add_pod("kube-system", "proxy-a", "node-a", owners=[DAEMONSET], ready=False)

    before = daemon_set_pods_ready(cluster.pods.list_on_node("node-a"))
    backend.set_pod_ready("kube-system", "proxy-a", True)
    after = daemon_set_pods_ready(cluster.pods.list_on_node("node-a"))

    assert (before.outcome, before.detail) == (
        CheckOutcome.PENDING,
        "DaemonSet pods not Ready: kube-system/proxy-a",
    )
    assert after.outcome is CheckOutcome.PASSED


def test_workload_ready_replicas_are_read_and_follow_changes(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    backend.put_workload(WEB, 3, "node-a")
    backend.put_workload(DB, 0, "node-a")

    first = (cluster.workloads.ready_replicas(WEB), cluster.workloads.ready_replicas(DB))
    backend.put_workload(WEB, 1, "node-a")

    assert first == (3, 0)
    assert cluster.workloads.ready_replicas(WEB) == 1


def test_a_workload_that_does_not_exist_reads_as_none(cluster: Ports) -> None:
    assert cluster.workloads.ready_replicas(WorkloadRef("ReplicaSet", "default", "gone")) is None


def test_the_evicted_workloads_record_round_trips_through_a_node_annotation(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    counts = {WEB: 3, DB: 1}

    cluster.nodes.set_annotations("node-a", {EVICTED_WORKLOADS_ANNOTATION: encode_record(counts)})

    assert record_on(cluster.nodes.get("node-a").annotations) == counts

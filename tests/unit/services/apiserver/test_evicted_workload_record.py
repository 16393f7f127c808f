"""Before a drain evicts, the apiserver records the ready replicas of the workloads it evicts."""

from __future__ import annotations

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import OwnerReference
from brupop.domain.safety.evicted_workloads import (
    EVICTED_WORKLOADS_ANNOTATION,
    WorkloadRef,
    encode_record,
    record_on,
)
from brupop.services.apiserver.drain.drainer import Drainer, DrainTimings
from brupop.services.apiserver.drain.evicted_workloads import EvictedWorkloadRecorder
from brupop.services.apiserver.drain.node_actions import NodeActions
from tests.fakes.clock import FakeClock

WEB = OwnerReference(kind="ReplicaSet", name="web-5d9", controller=True)
DB = OwnerReference(kind="StatefulSet", name="db", controller=True)
TIMINGS = DrainTimings(timeout_seconds=60, retry_interval_seconds=5, deletion_timeout_seconds=30)


@pytest.fixture
def cluster() -> InMemoryCluster:
    cluster = InMemoryCluster(clock=FakeClock())
    cluster.add_node("n1")
    cluster.add_node("n2")
    return cluster


def _drain(cluster: InMemoryCluster, node: str) -> None:
    recorder = EvictedWorkloadRecorder(cluster.nodes, cluster.workloads)
    drainer = Drainer(
        actions=NodeActions(cluster.nodes),
        pods=cluster.pods,
        clock=cluster.clock,
        timings=TIMINGS,
        recorder=recorder,
    )
    drainer.drain(node)


def test_drain_records_ready_replicas_of_evicted_workloads_as_they_were_before(
    cluster: InMemoryCluster,
) -> None:
    cluster.add_pod("apps", "web-5d9-a", "n1", owners=[WEB])
    cluster.add_pod("apps", "web-5d9-b", "n1", owners=[WEB])
    cluster.add_pod("apps", "web-5d9-c", "n2", owners=[WEB], ready=False)
    cluster.add_pod("data", "db-0", "n1", owners=[DB])

    _drain(cluster, "n1")

    record = record_on(cluster.nodes.get("n1").annotations)
    assert record == {
        WorkloadRef("ReplicaSet", "apps", "web-5d9"): 2,
        WorkloadRef("StatefulSet", "data", "db"): 1,
    }


def test_a_drain_with_no_workload_replaces_an_earlier_record_with_an_empty_one(
    cluster: InMemoryCluster,
) -> None:
    stale = encode_record({WorkloadRef("ReplicaSet", "apps", "old"): 5})
    cluster.nodes.set_annotations("n1", {EVICTED_WORKLOADS_ANNOTATION: stale})
    cluster.add_pod("apps", "lonely", "n1")

    _drain(cluster, "n1")

    assert record_on(cluster.nodes.get("n1").annotations) == {}


def test_unreadable_replicas_remove_the_record_and_the_drain_goes_on(
    cluster: InMemoryCluster,
) -> None:
    stale = encode_record({WorkloadRef("ReplicaSet", "apps", "old"): 5})
    cluster.nodes.set_annotations("n1", {EVICTED_WORKLOADS_ANNOTATION: stale})
    cluster.add_pod("apps", "web-5d9-a", "n1", owners=[WEB])
    cluster.workloads.unavailable = True

    _drain(cluster, "n1")

    assert EVICTED_WORKLOADS_ANNOTATION not in cluster.nodes.get("n1").annotations
    assert [p.name for p in cluster.pods.list_on_node("n1")] == []

"""Drainer: kubectl-like drains, bounded by timeouts, that never report success too early."""

from __future__ import annotations

import threading

import pytest
import structlog

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import (
    MIRROR_POD_ANNOTATION,
    OwnerReference,
    PodPhase,
)
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import DrainFailedError
from brupop.services.apiserver.drain.drainer import Drainer, DrainTimings
from brupop.services.apiserver.drain.node_actions import NodeActions
from tests.fakes.clock import FakeClock
from tests.unit.services.apiserver.drain_fakes import (
    TIMINGS,
    RecordingPods,
    SteppingClock,
)

REPLICA_SET = (OwnerReference(kind="ReplicaSet", name="web-5d9", controller=True),)
DAEMON_SET = (OwnerReference(kind="DaemonSet", name="kube-proxy", controller=True),)


def make_drainer(
    cluster: InMemoryCluster, clock: FakeClock, pods: PodRepository | None = None
) -> Drainer:
    return Drainer(
        actions=NodeActions(cluster.nodes),
        pods=pods or cluster.pods,
        clock=clock,
        timings=TIMINGS,
    )


def names_on(cluster: InMemoryCluster, node: str) -> set[str]:
    return {pod.name for pod in cluster.pods.list_on_node(node)}


def test_drain_evicts_workloads_and_leaves_daemonset_and_mirror_pods(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    cluster.add_pod("apps", "web-5d9-a", "n1", labels={"app": "web"}, owners=REPLICA_SET)
    cluster.add_pod("apps", "lonely", "n1")
    cluster.add_pod("kube-system", "kube-proxy-x", "n1", owners=DAEMON_SET)
    cluster.add_pod("kube-system", "etcd-n1", "n1", annotations={MIRROR_POD_ANNOTATION: "abc"})

    report = make_drainer(cluster, clock).drain("n1")

    assert names_on(cluster, "n1") == {"kube-proxy-x", "etcd-n1"}
    assert sorted(report.evicted) == ["apps/lonely", "apps/web-5d9-a"]
    assert cluster.nodes.get("n1").unschedulable


def test_drain_deletes_finished_pods_even_when_a_budget_refuses_evictions(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    cluster.add_pod("jobs", "report-1", "n1", labels={"app": "report"}, phase=PodPhase.SUCCEEDED)
    cluster.add_disruption_budget("jobs", "report-pdb", {"app": "report"}, max_unavailable=0)
    pods = RecordingPods(cluster.pods)

    report = make_drainer(cluster, clock, pods).drain("n1")

    assert pods.deleted == ["jobs/report-1"]
    assert pods.evicted == []
    assert report.deleted == ["jobs/report-1"]
    assert names_on(cluster, "n1") == set()


def test_drain_blocked_by_a_budget_fails_within_the_timeout_naming_pod_and_budget(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    cluster.add_pod("apps", "db-0", "n1", labels={"app": "db"})
    cluster.add_disruption_budget("apps", "db-pdb", {"app": "db"}, min_available=1)
    started = clock.monotonic()

    with pytest.raises(DrainFailedError) as failure:
        make_drainer(cluster, clock).drain("n1")

    assert failure.value.blockers == ("apps/db-0",)
    assert "apps/db-0" in str(failure.value)
    assert "PodDisruptionBudget apps/db-pdb" in str(failure.value)
    assert TIMINGS.timeout_seconds <= clock.monotonic() - started <= TIMINGS.timeout_seconds + 5
    assert names_on(cluster, "n1") == {"db-0"}


def test_drain_succeeds_once_the_budget_allows_the_eviction(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    _budget_allows_after_three_retries(cluster, clock)

    report = make_drainer(cluster, clock).drain("n1")

    assert report.evicted == ["apps/web-5d9-a"]
    assert names_on(cluster, "n1") == set()
    assert len(clock.sleeps) == 3


def test_drain_fails_when_an_evicted_pod_never_leaves_the_node(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    cluster.add_pod("apps", "stubborn", "n1")
    pods = RecordingPods(cluster.pods, evictions_take_effect=False)

    with pytest.raises(DrainFailedError) as failure:
        make_drainer(cluster, clock, pods).drain("n1")

    assert failure.value.blockers == ("apps/stubborn",)
    assert sum(clock.sleeps) <= TIMINGS.deletion_timeout_seconds + TIMINGS.retry_interval_seconds


def test_drain_evicts_at_most_five_pods_at_a_time(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    for index in range(10):
        cluster.add_pod("apps", f"pod-{index}", "n1")
    meeting = threading.Barrier(5, timeout=5)
    in_flight = 0
    most = 0
    lock = threading.Lock()

    class FiveAtATime(RecordingPods):
        def evict(self, namespace: str, name: str, grace_period_seconds: int | None = None) -> None:
            nonlocal in_flight, most
            with lock:
                in_flight += 1
                most = max(most, in_flight)
            meeting.wait()  # breaks (and fails the drain) unless exactly five meet
            with lock:
                in_flight -= 1
            super().evict(namespace, name, grace_period_seconds)

    make_drainer(cluster, clock, FiveAtATime(cluster.pods)).drain("n1")

    assert most == 5
    assert names_on(cluster, "n1") == set()


def test_drain_keeps_an_administrators_cordon_recorded_as_theirs(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    cluster.nodes.set_unschedulable("n1", True)
    cluster.add_pod("apps", "lonely", "n1")

    make_drainer(cluster, clock).drain("n1")
    NodeActions(cluster.nodes).uncordon("n1")

    assert cluster.nodes.get("n1").unschedulable


def test_a_pod_held_for_the_whole_drain_logs_its_first_refusal_then_a_summary_per_minute(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    cluster.add_pod("apps", "db-0", "n1", labels={"app": "db"})
    cluster.add_disruption_budget("apps", "db-pdb", {"app": "db"}, min_available=1)
    timings = DrainTimings(timeout_seconds=900, retry_interval_seconds=5)  # the defaults' rhythm
    drainer = Drainer(
        actions=NodeActions(cluster.nodes), pods=cluster.pods, clock=clock, timings=timings
    )

    with structlog.testing.capture_logs() as lines, pytest.raises(DrainFailedError):
        drainer.drain("n1")

    refused = [line for line in lines if line["event"] == "drain.eviction_refused"]
    summaries = [line for line in lines if line["event"] == "drain.evictions_still_refused"]
    assert len(refused) == 1 and refused[0]["pod"] == "apps/db-0"
    assert 14 <= len(summaries) <= 15  # one a minute over 15 minutes, not one per retry
    assert all(line["pods"] == ["apps/db-0"] for line in summaries)
    counted = 1 + sum(line["refusals_since_last_line"] for line in summaries)
    assert 165 <= counted <= 181  # ~180 refusals (one per 5 s), the last minute's unsummarised


def test_a_pod_evicted_after_refusals_says_how_many_it_took(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    _budget_allows_after_three_retries(cluster, clock)

    with structlog.testing.capture_logs() as lines:
        make_drainer(cluster, clock).drain("n1")

    (evicted,) = [line for line in lines if line["event"] == "drain.pod_evicted"]
    assert evicted["after_refusals"] == 3
    assert [line["event"] for line in lines].count("drain.eviction_refused") == 1


def _budget_allows_after_three_retries(cluster: InMemoryCluster, clock: SteppingClock) -> None:
    """web-5d9-a on n1 under a budget of one web pod available: its second replica, on n2,
    becomes ready during the drain's third wait, so the fourth eviction is allowed."""
    cluster.add_pod("apps", "web-5d9-a", "n1", labels={"app": "web"}, owners=REPLICA_SET)
    cluster.add_disruption_budget("apps", "web-pdb", {"app": "web"}, min_available=1)
    sleeps = iter(range(1000))

    def second_replica_becomes_ready_after_three_retries() -> None:
        if next(sleeps) == 2:
            cluster.add_pod("apps", "web-5d9-b", "n2", labels={"app": "web"}, owners=REPLICA_SET)

    clock.on_sleep = second_replica_becomes_ready_after_three_retries

"""Each health-gate check judges what the cluster shows: pending until satisfied."""

from __future__ import annotations

from brupop.domain.cluster.objects import Node, OwnerReference, Pod, PodPhase
from brupop.domain.safety.evicted_workloads import WorkloadRef
from brupop.domain.safety.gate_checks import (
    ProbeAnswer,
    daemon_set_pods_ready,
    evicted_workloads_recovered,
    http_probe,
    node_ready,
)
from brupop.domain.safety.health_gate import CheckOutcome

DS = (OwnerReference(kind="DaemonSet", name="agent", controller=True),)
RS = (OwnerReference(kind="ReplicaSet", name="web-1", controller=True),)
WEB = WorkloadRef("ReplicaSet", "default", "web-1")
DB = WorkloadRef("StatefulSet", "default", "db")


def _pod(name: str, owners: tuple[OwnerReference, ...], *, ready: bool = True) -> Pod:
    return Pod(name=name, namespace="ns", uid=name, node_name="n", owners=owners, ready=ready)


def test_node_ready_follows_the_ready_condition() -> None:
    assert node_ready(Node("n", "u", ready=True)).outcome is CheckOutcome.PASSED
    assert node_ready(Node("n", "u", ready=False)).outcome is CheckOutcome.PENDING


def test_daemon_set_pods_must_all_be_ready_and_running() -> None:
    ready = [_pod("agent-1", DS), _pod("web-x", RS, ready=False)]
    not_ready = [_pod("agent-1", DS, ready=False), _pod("proxy-1", DS)]
    pending = [Pod("agent-2", "ns", "u", "n", phase=PodPhase.PENDING, owners=DS)]

    assert daemon_set_pods_ready(ready).outcome is CheckOutcome.PASSED
    result = daemon_set_pods_ready(not_ready)
    assert (result.outcome, result.detail) == (
        CheckOutcome.PENDING,
        "DaemonSet pods not Ready: ns/agent-1",
    )
    assert daemon_set_pods_ready(pending).outcome is CheckOutcome.PENDING
    assert daemon_set_pods_ready([]).outcome is CheckOutcome.PASSED


def test_evicted_workloads_need_their_ready_replicas_back() -> None:
    before = {WEB: 3, DB: 2}

    short = evicted_workloads_recovered(before, {WEB: 2, DB: 2})
    back = evicted_workloads_recovered(before, {WEB: 3, DB: 5})
    one_deleted = evicted_workloads_recovered(before, {WEB: None, DB: 2})

    assert (short.outcome, short.detail) == (
        CheckOutcome.PENDING,
        "not recovered: ReplicaSet default/web-1 (2/3 ready)",
    )
    assert back.outcome is CheckOutcome.PASSED
    assert one_deleted.outcome is CheckOutcome.PASSED


def test_a_workload_not_looked_up_is_not_recovered() -> None:
    assert evicted_workloads_recovered({WEB: 1}, {}).outcome is CheckOutcome.PENDING


def test_nothing_recorded_passes() -> None:
    assert evicted_workloads_recovered(None, {}).outcome is CheckOutcome.PASSED
    assert evicted_workloads_recovered({}, {}).outcome is CheckOutcome.PASSED


def test_http_probe_passes_only_on_the_expected_status() -> None:
    url = "http://10.0.0.1:8080/healthz"

    ok = http_probe(0, url, 200, ProbeAnswer(status=200))
    wrong = http_probe(1, url, 200, ProbeAnswer(status=503))
    refused = http_probe(1, url, 204, ProbeAnswer(error="connection refused"))

    assert ok.outcome is CheckOutcome.PASSED
    assert (wrong.outcome, wrong.name, wrong.detail) == (
        CheckOutcome.PENDING,
        "httpProbe[1]",
        f"GET {url} answered 503 (expected 200)",
    )
    assert refused.detail == f"GET {url} failed: connection refused (expected 204)"

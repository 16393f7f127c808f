"""HealthChecks: the gate's enabled checks for one node, run over the in-memory cluster."""

from __future__ import annotations

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.gates import InMemoryHttpProber
from brupop.domain.cluster.objects import OwnerReference
from brupop.domain.policy.update_policy import HealthGateSpec, HttpProbeSpec
from brupop.domain.safety.alert_gate import AlertGateState, FiringAlert
from brupop.domain.safety.evicted_workloads import (
    EVICTED_WORKLOADS_ANNOTATION,
    WorkloadRef,
    encode_record,
)
from brupop.domain.safety.health_gate import (
    CheckOutcome,
    CheckResult,
    GateCheck,
    GateVerdict,
    decide_gate,
)
from brupop.services.controller.safety.health_checks import HealthChecks
from tests.fakes.clock import FakeClock

AGENT = OwnerReference(kind="DaemonSet", name="brupop-agent", controller=True)
WEB = OwnerReference(kind="ReplicaSet", name="web-1", controller=True)
GATE = HealthGateSpec(http_probes=(HttpProbeSpec(url="http://{node_ip}:8080/healthz/{node_name}"),))
PROBE_URL = "http://10.0.0.1:8080/healthz/n1"


@pytest.fixture
def cluster() -> InMemoryCluster:
    cluster = InMemoryCluster(clock=FakeClock())
    cluster.add_node("n1", internal_ip="10.0.0.1")
    cluster.add_node("n2")
    cluster.add_pod("brupop", "agent-n1", "n1", owners=[AGENT])
    return cluster


@pytest.fixture
def prober() -> InMemoryHttpProber:
    prober = InMemoryHttpProber()
    prober.answer(PROBE_URL, status=200)
    return prober


def _checks(cluster: InMemoryCluster, prober: InMemoryHttpProber) -> HealthChecks:
    return HealthChecks(
        nodes=cluster.nodes, pods=cluster.pods, workloads=cluster.workloads, prober=prober
    )


def _outcomes(results: list[CheckResult]) -> dict[str, CheckOutcome]:
    return {result.name: result.outcome for result in results}


def test_a_healthy_node_passes_every_enabled_check(
    cluster: InMemoryCluster, prober: InMemoryHttpProber
) -> None:
    results = _checks(cluster, prober).run("n1", GATE)

    assert _outcomes(results) == {
        "nodeReady": CheckOutcome.PASSED,
        "daemonSetPodsReady": CheckOutcome.PASSED,
        "evictedWorkloadsRecovered": CheckOutcome.PASSED,
        "httpProbe[0]": CheckOutcome.PASSED,
    }
    assert prober.probed == [PROBE_URL]


def test_an_unhealthy_node_is_pending_on_each_failing_check(
    cluster: InMemoryCluster, prober: InMemoryHttpProber
) -> None:
    cluster.set_node_ready("n1", False)
    cluster.set_pod_ready("brupop", "agent-n1", False)
    prober.answer(PROBE_URL, status=503)

    results = _checks(cluster, prober).run("n1", GATE)

    assert _outcomes(results)["nodeReady"] is CheckOutcome.PENDING
    assert _outcomes(results)["daemonSetPodsReady"] is CheckOutcome.PENDING
    assert _outcomes(results)["httpProbe[0]"] is CheckOutcome.PENDING


def test_evicted_workloads_are_compared_with_the_record_on_the_node(
    cluster: InMemoryCluster, prober: InMemoryHttpProber
) -> None:
    cluster.add_pod("apps", "web-1-a", "n2", owners=[WEB])
    record = encode_record({WorkloadRef("ReplicaSet", "apps", "web-1"): 2})
    cluster.nodes.set_annotations("n1", {EVICTED_WORKLOADS_ANNOTATION: record})
    checks = _checks(cluster, prober)

    short = checks.run("n1", HealthGateSpec())
    cluster.add_pod("apps", "web-1-b", "n2", owners=[WEB])
    back = checks.run("n1", HealthGateSpec())

    assert _outcomes(short)["evictedWorkloadsRecovered"] is CheckOutcome.PENDING
    assert "ReplicaSet apps/web-1 (1/2 ready)" in short[2].detail
    assert _outcomes(back)["evictedWorkloadsRecovered"] is CheckOutcome.PASSED


def test_only_enabled_checks_run_and_a_firing_alert_fails_the_gate(
    cluster: InMemoryCluster, prober: InMemoryHttpProber
) -> None:
    gate = HealthGateSpec(
        require_daemon_set_pods_ready=False, require_evicted_workloads_recovered=False
    )
    firing = AlertGateState(firing=(FiringAlert("NodeDown"),))
    clock = FakeClock()

    results = _checks(cluster, prober).run("n1", gate, firing)
    decision = decide_gate(
        results, monitoring_since=clock.now(), timeout_seconds=60, now=clock.now()
    )

    assert [r.check for r in results] == [GateCheck.NODE_READY, GateCheck.ALERT_GATE]
    assert decision.verdict is GateVerdict.FAIL
    assert decision.message == "health gate failed on alertGate: alert firing: NodeDown"


def test_a_node_without_an_address_waits_for_one_before_probing(
    cluster: InMemoryCluster, prober: InMemoryHttpProber
) -> None:
    results = _checks(cluster, prober).run("n2", GATE)

    assert results[-1].detail == "the node has no InternalIP yet"
    assert prober.probed == []


def test_an_unreadable_cluster_leaves_checks_pending_not_failed(
    cluster: InMemoryCluster, prober: InMemoryHttpProber
) -> None:
    cluster.pods.unavailable = True
    missing = _checks(cluster, prober).run("ghost", HealthGateSpec())
    pods_down = _checks(cluster, prober).run("n1", HealthGateSpec())

    assert set(_outcomes(missing).values()) == {CheckOutcome.PENDING}
    assert "the node cannot be read" in missing[0].detail
    assert _outcomes(pods_down)["daemonSetPodsReady"] is CheckOutcome.PENDING
    assert pods_down[1].detail.startswith("cannot tell: ")

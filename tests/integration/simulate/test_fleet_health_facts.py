"""Simulated nodes carry what the health gate checks: a Ready Node and a Ready DaemonSet pod."""

from __future__ import annotations

from pathlib import Path

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.gates import InMemoryHttpProber
from brupop.cli.fleet_description.nodes import build_fleet
from brupop.domain.policy.update_policy import HealthGateSpec
from brupop.domain.safety.health_gate import CheckOutcome
from brupop.services.controller.safety.health_checks import HealthChecks


def test_every_simulated_node_passes_the_cluster_checks_and_can_be_made_unhealthy(
    tmp_path: Path,
) -> None:
    cluster = InMemoryCluster()
    build_fleet(cluster, ["node-1", "node-2"], tmp_path)
    checks = HealthChecks(
        nodes=cluster.nodes,
        pods=cluster.pods,
        workloads=cluster.workloads,
        prober=InMemoryHttpProber(),
    )

    healthy = {name: checks.run(name, HealthGateSpec()) for name in ("node-1", "node-2")}
    cluster.set_node_ready("node-2", False)
    agent = next(
        p
        for p in cluster.pods.list_on_node("node-2")
        if any(o.kind == "DaemonSet" for o in p.owners)
    )
    cluster.set_pod_ready(agent.namespace, agent.name, False)
    unhealthy = checks.run("node-2", HealthGateSpec())

    assert all(r.outcome is CheckOutcome.PASSED for results in healthy.values() for r in results)
    assert [r.outcome for r in unhealthy[:2]] == [CheckOutcome.PENDING, CheckOutcome.PENDING]
    assert any(o.kind == "DaemonSet" for p in cluster.pods.list_on_node("node-1") for o in p.owners)

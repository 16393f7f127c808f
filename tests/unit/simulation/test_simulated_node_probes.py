"""In simulate, the health gate's HTTP probes are answered by the simulated nodes: 200 while a
node is healthy, refused while it is not, and never past the address allowance."""

from __future__ import annotations

from pathlib import Path

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.gates import Reach
from brupop.cli.fleet_description.nodes import (
    AGENT_COMPONENT,
    AGENT_DAEMONSET,
    SimulatedNode,
    build_fleet,
)
from brupop.domain.cluster.objects import COMPONENT_LABEL, OwnerReference
from brupop.domain.policy.address_allowance import AddressAllowance
from brupop.domain.policy.update_policy import HealthGateSpec
from brupop.domain.safety.health_gate import CheckOutcome, GateCheck
from brupop.services.controller.safety.health_checks import HealthChecks
from brupop.simulation.fleet.node_probes import SimulatedNodeProber

NAMES = ["node-01", "node-02", "node-03"]


def _fleet(tmp_path: Path) -> tuple[InMemoryCluster, list[SimulatedNode]]:
    cluster = InMemoryCluster()
    return cluster, build_fleet(cluster, NAMES, tmp_path)


def _node_with_agent(cluster: InMemoryCluster, name: str, address: str) -> None:
    """A Ready Node at `address` whose agent pod runs, as the fleet builds them."""
    cluster.add_node(name, internal_ip=address)
    cluster.add_pod(
        cluster.namespace,
        f"{AGENT_DAEMONSET}-{name}",
        name,
        labels={COMPONENT_LABEL: AGENT_COMPONENT},
        owners=(OwnerReference(kind="DaemonSet", name=AGENT_DAEMONSET, controller=True),),
    )


def _prober(cluster: InMemoryCluster, reach: Reach | None = None) -> SimulatedNodeProber:
    return SimulatedNodeProber(cluster.nodes, cluster.pods, reach)


def test_simulated_nodes_get_distinct_addresses_the_default_policy_allows(
    tmp_path: Path,
) -> None:
    cluster, _ = _fleet(tmp_path)
    addresses = [cluster.nodes.get(name).internal_ip for name in NAMES]

    assert addresses == ["10.0.0.11", "10.0.0.12", "10.0.0.13"]
    assert all(Reach().refusal(f"http://{a}:10256/healthz") is None for a in addresses)


def test_a_ready_node_answers_a_probe_of_its_address_with_200(tmp_path: Path) -> None:
    cluster, _ = _fleet(tmp_path)

    answer = _prober(cluster).probe("http://10.0.0.12:10256/healthz", 3.0)

    assert (answer.status, answer.error) == (200, None)


def test_a_ready_node_answers_a_probe_of_its_name_with_200(tmp_path: Path) -> None:
    cluster, _ = _fleet(tmp_path)

    answer = _prober(cluster).probe("https://node-03:8443/ready", 3.0)

    assert (answer.status, answer.error) == (200, None)


def test_a_not_ready_node_refuses_its_probe_and_the_others_still_answer(
    tmp_path: Path,
) -> None:
    cluster, _ = _fleet(tmp_path)
    cluster.set_node_ready("node-02", False)
    prober = _prober(cluster)

    sick = prober.probe("http://10.0.0.12:10256/healthz", 3.0)
    well = prober.probe("http://10.0.0.11:10256/healthz", 3.0)

    assert (sick.status, sick.error) == (None, "connection refused")
    assert well.status == 200


def test_a_node_whose_agent_pod_is_not_ready_refuses_its_probe(tmp_path: Path) -> None:
    cluster, fleet = _fleet(tmp_path)
    cluster.set_pod_ready(cluster.namespace, fleet[0].agent_pod, False)

    answer = _prober(cluster).probe("http://10.0.0.11:10256/healthz", 3.0)

    assert (answer.status, answer.error) == (None, "connection refused")


def test_a_node_answers_again_once_it_is_ready_again(tmp_path: Path) -> None:
    cluster, _ = _fleet(tmp_path)
    prober = _prober(cluster)
    cluster.set_node_ready("node-01", False)
    refused = prober.probe("http://10.0.0.11:10256/healthz", 3.0)
    cluster.set_node_ready("node-01", True)

    answer = prober.probe("http://10.0.0.11:10256/healthz", 3.0)

    assert refused.error == "connection refused"
    assert answer.status == 200


def test_a_host_that_is_no_simulated_node_is_refused(tmp_path: Path) -> None:
    cluster, _ = _fleet(tmp_path)
    prober = _prober(cluster)

    answers = [
        prober.probe(url, 3.0)
        for url in ("http://10.0.0.99:10256/healthz", "http://node-09/healthz", "http://x.test/")
    ]

    assert [(a.status, a.error) for a in answers] == [(None, "connection refused")] * 3


def test_the_default_address_allowance_still_refuses_a_node_on_a_loopback_address() -> None:
    cluster = InMemoryCluster()
    _node_with_agent(cluster, "node-01", "127.0.0.1")

    answer = _prober(cluster).probe("http://127.0.0.1:10256/healthz", 3.0)

    assert answer.status is None
    assert answer.error == (
        "refused: 127.0.0.1 is a loopback address (not allowed by PROBE_ALLOWED_NETWORKS)"
    )


def test_the_address_allowance_refuses_metadata_and_urls_it_cannot_read(tmp_path: Path) -> None:
    cluster, _ = _fleet(tmp_path)
    prober = _prober(cluster)

    metadata = prober.probe("http://169.254.169.254/latest/meta-data/", 3.0)
    credentials = prober.probe("http://user:pw@10.0.0.11:10256/healthz", 3.0)
    scheme = prober.probe("ftp://10.0.0.11/healthz", 3.0)

    assert metadata.error is not None and "cloud metadata address" in metadata.error
    assert credentials.error == "refused: credentials do not belong in the URL"
    assert scheme.error == "not an http(s) URL"
    assert None is metadata.status is credentials.status is scheme.status


def test_an_allowance_for_a_refused_address_lets_a_probe_reach_that_node() -> None:
    cluster = InMemoryCluster()
    _node_with_agent(cluster, "node-01", "127.0.0.1")
    allowed = Reach(AddressAllowance.parse("127.0.0.1"))

    answer = _prober(cluster, allowed).probe("http://127.0.0.1:10256/healthz", 3.0)

    assert (answer.status, answer.error) == (200, None)


def test_a_pod_that_is_not_the_agent_does_not_make_a_node_answer() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("node-01", internal_ip="10.0.0.11")
    cluster.add_pod(
        "default",
        "web-0",
        "node-01",
        owners=(OwnerReference(kind="DaemonSet", name="log-shipper", controller=True),),
    )

    answer = _prober(cluster).probe("http://10.0.0.11:10256/healthz", 3.0)

    assert answer.error == "connection refused"


def test_a_probe_of_another_spelling_of_an_ipv6_node_address_reaches_that_node() -> None:
    cluster = InMemoryCluster()
    _node_with_agent(cluster, "node-01", "fd00::11")

    answer = _prober(cluster).probe("http://[FD00:0::11]:10256/healthz", 3.0)

    assert answer.status == 200


def test_the_health_gate_passes_the_probe_of_a_healthy_simulated_node(tmp_path: Path) -> None:
    cluster, _ = _fleet(tmp_path)
    gate = HealthGateSpec.model_validate(
        {"httpProbes": [{"url": "http://{node_ip}:10256/healthz", "expectStatus": 200}]}
    )
    checks = HealthChecks(
        nodes=cluster.nodes,
        pods=cluster.pods,
        workloads=cluster.workloads,
        prober=_prober(cluster),
    )

    results = checks.run("node-02", gate)

    probe = next(r for r in results if r.check is GateCheck.HTTP_PROBE)
    assert probe.outcome is CheckOutcome.PASSED, probe.detail
    assert "http://10.0.0.12:10256/healthz" in probe.detail

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.cli.doctor.agents import AGENT_SELECTOR, check_agents
from brupop.cli.doctor.workloads import check_deployment, check_leader
from brupop.domain.shadow import OPT_IN_LABEL
from tests.unit.cli.doctor.fake_cluster import FakeCluster, listing

NS = "brupop"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
DEPLOY = f"/apis/apps/v1/namespaces/{NS}/deployments/brupop-apiserver"
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/brupop-controller-leader"


def test_a_deployment_passes_only_with_every_replica_available() -> None:
    def result(available: int | None) -> tuple[bool, str]:
        status = {} if available is None else {"availableReplicas": available}
        cluster = FakeCluster({DEPLOY: {"spec": {"replicas": 3}, "status": status}})
        found = check_deployment(cluster, NS, "brupop-apiserver")
        return found.ok, found.detail

    assert result(3) == (True, "3/3 replicas available")
    assert result(2) == (False, "2/3 replicas available")
    assert result(None) == (False, "0/3 replicas available")


def test_a_missing_deployment_fails_saying_to_install_the_chart() -> None:
    found = check_deployment(FakeCluster(), NS, "brupop-apiserver")
    assert (found.ok, found.detail) == (False, "not found")


def _lease(holder: str | None, renewed: datetime) -> FakeCluster:
    spec = {"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": renewed.isoformat()}
    return FakeCluster({LEASE: {"spec": spec}})


def test_the_leader_check_passes_for_a_holder_renewed_within_the_lease() -> None:
    found = check_leader(_lease("ctl-0", NOW - timedelta(seconds=4)), NS, NOW)
    assert (found.ok, found.detail) == (True, "ctl-0 holds the Lease (renewed 4 s ago)")


def test_a_lease_renewed_longer_ago_than_its_duration_fails() -> None:
    found = check_leader(_lease("ctl-0", NOW - timedelta(seconds=40)), NS, NOW)
    assert (found.ok, found.detail) == (False, "ctl-0 last renewed 40 s ago, past its 15 s lease")


def test_a_lease_without_holder_or_a_missing_lease_fails() -> None:
    assert check_leader(_lease(None, NOW), NS, NOW).detail == "the Lease has no holder"
    assert not check_leader(FakeCluster(), NS, NOW).ok


def _node(name: str) -> dict[str, object]:
    return {"metadata": {"name": name}}


def _pod(node: str, ready: str = "True") -> dict[str, object]:
    return {
        "spec": {"nodeName": node},
        "status": {"conditions": [{"type": "Ready", "status": ready}]},
    }


def _fleet(pods: list[dict[str, object]], shadows: list[str]) -> FakeCluster:
    return FakeCluster(
        {
            "/api/v1/nodes": listing(_node("a"), _node("b")),
            f"/api/v1/namespaces/{NS}/pods": listing(*pods),
            f"/apis/brupop.bottlerocket.aws/v2/namespaces/{NS}/bottlerocketshadows": listing(
                *(_node(name) for name in shadows)
            ),
        }
    )


def test_agents_pass_when_every_opted_in_node_has_a_ready_agent_and_a_shadow() -> None:
    cluster = _fleet([_pod("a"), _pod("b")], ["brs-a", "brs-b"])
    found = check_agents(cluster, NS)
    assert found.ok
    assert cluster.queries["/api/v1/nodes"] == {"labelSelector": OPT_IN_LABEL}
    assert cluster.queries[f"/api/v1/namespaces/{NS}/pods"] == {"labelSelector": AGENT_SELECTOR}


def test_a_node_whose_agent_is_not_ready_is_named() -> None:
    found = check_agents(_fleet([_pod("a"), _pod("b", "False")], ["brs-a", "brs-b"]), NS)
    assert (found.ok, found.detail) == (False, "no Ready agent on b (of 2 opted-in nodes)")


def test_a_node_with_an_agent_but_no_shadow_is_named() -> None:
    found = check_agents(_fleet([_pod("a"), _pod("b")], ["brs-a"]), NS)
    assert (found.ok, found.detail) == (False, "no shadow for b")


def test_no_opted_in_node_fails_with_the_label_to_set() -> None:
    cluster = FakeCluster(
        {
            "/api/v1/nodes": listing(),
            f"/api/v1/namespaces/{NS}/pods": listing(),
            f"/apis/brupop.bottlerocket.aws/v2/namespaces/{NS}/bottlerocketshadows": listing(),
        }
    )
    found = check_agents(cluster, NS)
    assert not found.ok
    assert OPT_IN_LABEL in found.advice

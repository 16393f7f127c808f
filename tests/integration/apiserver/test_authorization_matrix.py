"""Every protected route against every kind of caller: the right status, and nobody else touched.

Statuses: missing header 400, token not accepted 401, known but not the agent of that node 403,
the node's own agent 200. A refused request changes nothing; no request changes another node.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import urllib3

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import COMPONENT_LABEL, OwnerReference
from brupop.ports.errors import NotFoundError
from brupop.services.apiserver.authorization.authorizer import AGENT_SERVICE_ACCOUNT
from tests.integration.apiserver.conftest import (
    FAST_DRAINS,
    NS,
    Rig,
    add_agent_nodes,
    agent_pod,
    start_rig,
)
from tests.support.tls import TestCertificates

RESOURCE = "/bottlerocket-node-resource"
STATUS = {"current_version": "1.0.0", "target_version": "1.1.0", "current_state": "Idle"}
ROUTES = [
    ("POST", RESOURCE, None),
    ("PUT", RESOURCE, STATUS),
    ("GET", RESOURCE, None),
    ("GET", f"{RESOURCE}/node-uid", None),
    ("POST", f"{RESOURCE}/cordon-and-drain", None),
    ("POST", f"{RESOURCE}/uncordon", None),
    ("POST", f"{RESOURCE}/exclude-from-lb", None),
    ("POST", f"{RESOURCE}/remove-exclusion-from-lb", None),
]
CASES = {
    "no token": 400,
    "no node name": 400,
    "bad token": 401,
    "token of an agent on another node": 403,
    "token of a non-agent pod": 403,
    "token of a pod as another service account": 403,
    "wrong node uid": 403,
    "valid": 200,
}


@pytest.fixture(scope="module")
def rig(certs: TestCertificates) -> Iterator[Rig]:
    cluster = InMemoryCluster(NS)
    add_agent_nodes(cluster)
    # DaemonSet pods, so the drains of this module leave them on n1.
    owner = (OwnerReference(kind="DaemonSet", name="node-exporter", controller=True),)
    cluster.add_pod(NS, "intruder", "n1", owners=owner, service_account=AGENT_SERVICE_ACCOUNT)
    cluster.add_pod(NS, "impostor", "n1", owners=owner, labels={COMPONENT_LABEL: "agent"})
    cluster.shadows.create("n2", "uid-n2")
    options = ApiserverOptions(namespace=NS, drain=FAST_DRAINS, feed_watch_seconds=0.5)
    rig = start_rig(certs, cluster, options)
    yield rig
    rig.stop()


@pytest.fixture(scope="module")
def http(certs: TestCertificates) -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(ca_certs=str(certs.ca_path), retries=False, timeout=10)
    yield pool
    pool.clear()


def headers_for(rig: Rig, case: str) -> dict[str, str]:
    token = {
        "token of an agent on another node": rig.cluster.issue_token(NS, agent_pod("n2")),
        "token of a non-agent pod": rig.cluster.issue_token(NS, "intruder"),
        "token of a pod as another service account": rig.cluster.issue_token(NS, "impostor"),
        "bad token": "eyJhbGciOiJSUzI1NiJ9.bogus.token",
    }.get(case) or rig.cluster.issue_token(NS, agent_pod("n1"))
    headers = {"BrupopNodeName": "n1", "BrupopNodeUid": "uid-n1", "BrupopK8sAuthToken": token}
    if case == "no token":
        del headers["BrupopK8sAuthToken"]
    if case == "no node name":
        del headers["BrupopNodeName"]
    if case == "wrong node uid":
        headers["BrupopNodeUid"] = "uid-n2"
    return headers


def snapshot(rig: Rig, node: str) -> tuple[object, object]:
    try:
        shadow: object = rig.cluster.shadows.get(f"brs-{node}")
    except NotFoundError:
        shadow = None
    return rig.cluster.nodes.get(node), shadow


def prepare_n1(rig: Rig, method: str, path: str) -> None:
    """Creating needs no shadow yet; every other route acts on an existing one."""
    exists = any(s.name == "brs-n1" for s in rig.cluster.shadows.list().items)
    if (method, path) == ("POST", RESOURCE):
        if exists:
            rig.cluster.shadows.delete("brs-n1")
    elif not exists:
        rig.cluster.shadows.create("n1", "uid-n1")


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_route_answers_each_caller_with_its_status_and_touches_no_other_node(
    rig: Rig,
    http: urllib3.PoolManager,
    method: str,
    path: str,
    body: dict[str, str] | None,
    case: str,
) -> None:
    prepare_n1(rig, method, path)
    other_before = snapshot(rig, "n2")
    own_before = snapshot(rig, "n1")

    response = http.request(
        method,
        rig.server.base_url + path,
        headers=headers_for(rig, case),
        body=None if body is None else json.dumps(body).encode(),
    )

    assert response.status == CASES[case], response.data
    assert snapshot(rig, "n2") == other_before
    if CASES[case] != 200:
        assert snapshot(rig, "n1") == own_before
        assert set(json.loads(response.data)) == {"error"}

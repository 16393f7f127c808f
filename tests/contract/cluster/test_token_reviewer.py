"""TokenReviewer behaviour, the same for the in-memory cluster and for Kubernetes."""

from __future__ import annotations

from tests.contract.cluster.conftest import NAMESPACE, Backend, Ports

AUDIENCE = ("brupop-apiserver",)


def agent_pod(backend: Backend) -> str:
    backend.add_node("node-a")
    pod = backend.add_pod(
        NAMESPACE,
        "brupop-agent-x9x5c",
        "node-a",
        service_account="brupop-agent-service-account",
    )
    return pod.uid


def test_agent_token_names_its_account_pod_and_node(backend: Backend, cluster: Ports) -> None:
    pod_uid = agent_pod(backend)
    token = backend.issue_token(NAMESPACE, "brupop-agent-x9x5c", AUDIENCE)

    identity = cluster.token_reviewer.review(token, AUDIENCE)

    assert identity.authenticated
    assert identity.username == f"system:serviceaccount:{NAMESPACE}:brupop-agent-service-account"
    assert identity.audiences == AUDIENCE
    assert (identity.pod_name, identity.pod_uid) == ("brupop-agent-x9x5c", pod_uid)
    assert identity.node_name == "node-a"


def test_token_for_another_audience_is_not_authenticated(backend: Backend, cluster: Ports) -> None:
    agent_pod(backend)
    token = backend.issue_token(NAMESPACE, "brupop-agent-x9x5c", ("https://kubernetes.default",))

    assert not cluster.token_reviewer.review(token, AUDIENCE).authenticated


def test_unknown_token_is_not_authenticated(cluster: Ports) -> None:
    identity = cluster.token_reviewer.review("not-a-token", AUDIENCE)
    assert not identity.authenticated
    assert identity.pod_name is None


def test_token_of_a_deleted_pod_is_not_authenticated(backend: Backend, cluster: Ports) -> None:
    agent_pod(backend)
    token = backend.issue_token(NAMESPACE, "brupop-agent-x9x5c", AUDIENCE)
    backend.remove_pod(NAMESPACE, "brupop-agent-x9x5c")

    assert not cluster.token_reviewer.review(token, AUDIENCE).authenticated


def test_user_token_is_authenticated_without_a_pod(backend: Backend, cluster: Ports) -> None:
    token = backend.issue_user_token("jane@example.com", AUDIENCE)

    identity = cluster.token_reviewer.review(token, AUDIENCE)

    assert identity.authenticated
    assert identity.username == "jane@example.com"
    assert (identity.pod_name, identity.node_name) == (None, None)

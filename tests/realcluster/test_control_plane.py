"""What brupop relies on from a real control plane: kwok's Nodes and Pods become Ready,
TokenRequest/TokenReview carry the pod binding, kube-controller-manager fills PDB status, and
eviction honours the budget."""

from __future__ import annotations

import subprocess

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.realcluster.conftest import ControlPlane
from tests.support.control_plane.components import Ports
from tests.support.control_plane.pki import Pki
from tests.support.control_plane.probes import apiserver_ready
from tests.support.control_plane.versions import default_cache
from tests.support.polling import wait_until

AUDIENCE = "brupop-apiserver"
ACCOUNT = "brupop-agent"
POD_EXTRAS = ("pod-name", "pod-uid", "node-name")


def test_apiserver_is_ready_and_reports_the_pinned_release(control_plane: ControlPlane) -> None:
    ports = Ports.load(control_plane.folder / "ports.json")
    assert apiserver_ready(Pki(control_plane.folder / "pki"), ports)
    release = default_cache().versions.kubernetes
    binary = default_cache().binary("kube-apiserver")
    printed = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    assert printed.stdout.strip() == f"Kubernetes {release}"
    assert client.VersionApi(control_plane.api).get_code().git_version == release


def test_kwok_makes_the_annotated_node_ready(control_plane: ControlPlane, fake_node: str) -> None:
    node = control_plane.core.read_node(fake_node)
    assert node.metadata.annotations["kwok.x-k8s.io/node"] == "fake"


def test_a_pod_on_the_fake_node_runs_and_is_ready(
    control_plane: ControlPlane, fake_node: str, namespace: str
) -> None:
    pod = ready_pod(control_plane, namespace, fake_node, "agent")
    assert pod.status.phase == "Running"
    assert pod.spec.node_name == fake_node


def test_token_review_returns_the_pod_binding_for_the_requested_audience(
    control_plane: ControlPlane, fake_node: str, namespace: str
) -> None:
    pod = ready_pod(control_plane, namespace, fake_node, "agent")
    token = bound_token(control_plane, pod, AUDIENCE)
    review = token_review(control_plane, token, AUDIENCE)
    assert review.authenticated
    assert review.user.username == f"system:serviceaccount:{namespace}:{ACCOUNT}"
    extras = {key.rsplit("/", 1)[1]: value for key, value in review.user.extra.items()}
    assert extras["pod-name"] == [pod.metadata.name]
    assert extras["pod-uid"] == [pod.metadata.uid]
    assert extras["node-name"] == [fake_node]
    assert all(key.startswith("authentication.kubernetes.io/") for key in review.user.extra)
    assert not token_review(control_plane, token, "someone-else").authenticated


def test_controller_manager_fills_pdb_status_and_eviction_honours_it(
    control_plane: ControlPlane, fake_node: str, namespace: str
) -> None:
    first = ready_pod(control_plane, namespace, fake_node, "agent-a")
    budget(control_plane, namespace, min_available=1)
    wait_until(lambda: allowed(control_plane, namespace) == 0, "PDB status: 0 allowed", seconds=30)
    with pytest.raises(ApiException) as refused:
        evict(control_plane, namespace, first.metadata.name)
    assert refused.value.status == 429
    ready_pod(control_plane, namespace, fake_node, "agent-b")
    wait_until(lambda: allowed(control_plane, namespace) == 1, "PDB status: 1 allowed", seconds=30)
    evict(control_plane, namespace, first.metadata.name)
    wait_until(lambda: pod_gone(control_plane, namespace, first.metadata.name), "evicted pod gone")


def ready_pod(control_plane: ControlPlane, namespace: str, node: str, name: str) -> client.V1Pod:
    """A pod bound to `node` (there is no scheduler) under the agent's service account."""
    ensure_account(control_plane, namespace)
    body = client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": "brupop-agent"}),
        spec=client.V1PodSpec(
            node_name=node,
            service_account_name=ACCOUNT,
            containers=[client.V1Container(name="agent", image="brupop:fake")],
        ),
    )
    control_plane.core.create_namespaced_pod(namespace, body)
    wait_until(lambda: pod_ready(control_plane, namespace, name), f"pod {name} Ready", seconds=30)
    pod: client.V1Pod = control_plane.core.read_namespaced_pod(name, namespace)
    return pod


def ensure_account(control_plane: ControlPlane, namespace: str) -> None:
    account = client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=ACCOUNT))
    try:
        control_plane.core.create_namespaced_service_account(namespace, account)
    except ApiException as error:
        if error.status != 409:
            raise


def pod_ready(control_plane: ControlPlane, namespace: str, name: str) -> bool:
    status = control_plane.core.read_namespaced_pod_status(name, namespace).status
    return any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])


def pod_gone(control_plane: ControlPlane, namespace: str, name: str) -> bool:
    try:
        control_plane.core.read_namespaced_pod(name, namespace)
    except ApiException as error:
        return bool(error.status == 404)
    return False


def bound_token(control_plane: ControlPlane, pod: client.V1Pod, audience: str) -> str:
    bound = client.V1BoundObjectReference(
        api_version="v1", kind="Pod", name=pod.metadata.name, uid=pod.metadata.uid
    )
    request = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(
            audiences=[audience], bound_object_ref=bound, expiration_seconds=600
        )
    )
    answer = control_plane.core.create_namespaced_service_account_token(
        ACCOUNT, pod.metadata.namespace, request
    )
    token: str = answer.status.token
    return token


def token_review(
    control_plane: ControlPlane, token: str, audience: str
) -> client.V1TokenReviewStatus:
    review = client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token, audiences=[audience]))
    answer = client.AuthenticationV1Api(control_plane.api).create_token_review(review)
    status: client.V1TokenReviewStatus = answer.status
    return status


def budget(control_plane: ControlPlane, namespace: str, min_available: int) -> None:
    body = client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="agents"),
        spec=client.V1PodDisruptionBudgetSpec(
            min_available=min_available,
            selector=client.V1LabelSelector(match_labels={"app": "brupop-agent"}),
        ),
    )
    client.PolicyV1Api(control_plane.api).create_namespaced_pod_disruption_budget(namespace, body)


def allowed(control_plane: ControlPlane, namespace: str) -> int | None:
    policy = client.PolicyV1Api(control_plane.api)
    status = policy.read_namespaced_pod_disruption_budget_status("agents", namespace).status
    if status is None or status.observed_generation is None:
        return None
    count: int = status.disruptions_allowed
    return count


def evict(control_plane: ControlPlane, namespace: str, name: str) -> None:
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=namespace))
    control_plane.core.create_namespaced_pod_eviction(name, namespace, eviction)

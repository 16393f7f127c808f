"""Local token verification against the real kube-apiserver: TokenRequest tokens of agent pods
on kwok nodes, checked by the apiserver app with the issuer's JWKS and its pod mirror, are
accepted, and each way a token must be refused is refused, as TokenReview would.

"Expired" cannot wait for a real expiry (TokenRequest's shortest life is 600 s): the verifier's
Clock is moved past the token's `exp` (and the leeway) for that test only. Key rotation
restarts kube-apiserver with a new signing key
(`scripts/control-plane restart DIR kube-apiserver --new-signing-key`).

A pod a finalizer holds is compared with kube-apiserver's own TokenReview: both accept its token
just after the delete, and brupop refuses it once TokenReview does (60 s past its
deletionTimestamp; kwok deletes the pod, and the finalizer keeps it).

A deleted pod or service account revokes its tokens through the pod and account watches, not when
a cached decision lapses: each of those tests has its token's decision cached (for
LOCAL_DECISION_SECONDS, 600 s) before the delete, and waits far less than that for the refusal.
How soon the refusal comes is a speed figure, measured by bench/token_revocation.py.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from kubernetes import client

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.apiserver_http.serving.server import serve_in_thread
from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.kubernetes.tokens.issuer_keys import KubernetesIssuerKeys
from brupop.adapters.kubernetes.tokens.token_verifier import LEEWAY_SECONDS, KubernetesTokenVerifier
from brupop.adapters.system.clock import SystemClock
from brupop.domain.cluster.objects import COMPONENT_LABEL
from brupop.entrypoints.apiserver.container import ApiserverContainer
from brupop.services.apiserver.authorization.authorizer import (
    AGENT_AUDIENCE,
    AGENT_SERVICE_ACCOUNT,
    LOCAL_DECISION_SECONDS,
)
from brupop.services.apiserver.authorization.pods import AgentPodMirror
from tests.realcluster.conftest import KWOK_ANNOTATION, SCRIPT, ControlPlane, node_ready
from tests.support.polling import wait_until
from tests.support.tls import make_certificates

NODE_UID_PATH = "/bottlerocket-node-resource/node-uid"
OTHER_NODE = "kwok-token-node-2"
HOLD = "brupop.test/hold"
# How long a test waits for a revocation: generous under load, and far under the cached decision's
# life, so a refusal within it comes from a watch, not from the decision lapsing.
REVOKED_WITHIN_SECONDS = 60.0
assert REVOKED_WITHIN_SECONDS * 5 <= LOCAL_DECISION_SECONDS


class ShiftedClock:
    """The system clock, with `now` moved by `offset` and monotonic time by `ahead` seconds."""

    def __init__(self) -> None:
        self.offset = timedelta()
        self.ahead = 0.0
        self._system = SystemClock()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def monotonic(self) -> float:
        return self._system.monotonic() + self.ahead

    def sleep(self, seconds: float) -> None:
        self._system.sleep(seconds)


@dataclass
class Apiserver:
    """The apiserver app over the real control plane, the clock its verifier reads and its
    mirror of the agent pods and service accounts."""

    http: httpx.Client
    clock: ShiftedClock
    namespace: str
    node: str
    mirror: AgentPodMirror

    def status(self, token: str, node: str | None = None) -> int:
        headers = {"BrupopNodeName": node or self.node, "BrupopK8sAuthToken": token}
        status: int = self.http.get(NODE_UID_PATH, headers=headers).status_code
        return status

    def node_uid(self, token: str) -> str:
        headers = {"BrupopNodeName": self.node, "BrupopK8sAuthToken": token}
        answer = self.http.get(NODE_UID_PATH, headers=headers)
        assert answer.status_code == 200, answer.text
        return str(answer.json()["node_uid"])


@pytest.fixture(scope="module")
def other_node(control_plane: ControlPlane) -> str:
    meta = client.V1ObjectMeta(name=OTHER_NODE, annotations=KWOK_ANNOTATION)
    control_plane.core.create_node(client.V1Node(metadata=meta))
    wait_until(lambda: node_ready(control_plane.core, OTHER_NODE), "second node Ready", seconds=30)
    return OTHER_NODE


def agent_pod(
    plane: ControlPlane,
    namespace: str,
    name: str,
    node: str,
    finalizers: list[str] | None = None,
    account: str = AGENT_SERVICE_ACCOUNT,
) -> client.V1Pod:
    """An agent-labelled pod of `account` on node `node` (the account is made if new)."""
    try:
        meta = client.V1ObjectMeta(name=account)
        plane.core.create_namespaced_service_account(
            namespace, client.V1ServiceAccount(metadata=meta)
        )
    except client.ApiException as error:
        if error.status != 409:
            raise
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(
            name=name, labels={COMPONENT_LABEL: "agent"}, finalizers=finalizers
        ),
        spec=client.V1PodSpec(
            node_name=node,
            service_account_name=account,
            containers=[client.V1Container(name="agent", image="brupop-agent")],
        ),
    )
    created: client.V1Pod = plane.core.create_namespaced_pod(namespace, pod)
    return created


def token_of(
    plane: ControlPlane, pod: client.V1Pod, audience: str = AGENT_AUDIENCE, seconds: int = 600
) -> str:
    """A TokenRequest token bound to `pod` (its service account), for `audience`."""
    bound = client.V1BoundObjectReference(
        api_version="v1", kind="Pod", name=pod.metadata.name, uid=pod.metadata.uid
    )
    spec = client.V1TokenRequestSpec(
        audiences=[audience], bound_object_ref=bound, expiration_seconds=seconds
    )
    answer = plane.core.create_namespaced_service_account_token(
        pod.spec.service_account_name,
        pod.metadata.namespace,
        client.AuthenticationV1TokenRequest(spec=spec),
    )
    token: str = answer.status.token
    return token


def reviewed(plane: ControlPlane, token: str) -> bool:
    """kube-apiserver's own TokenReview accepts `token` (for brupop's audience)."""
    spec = client.V1TokenReviewSpec(token=token, audiences=[AGENT_AUDIENCE])
    review = client.AuthenticationV1Api(plane.api).create_token_review(
        client.V1TokenReview(spec=spec)
    )
    return bool(review.status.authenticated)


def start_apiserver(
    plane: ControlPlane, namespace: str, node: str, tls: Path, cache_seconds: float = 30.0
) -> Iterator[Apiserver]:
    """`brupop apiserver`'s app served on loopback HTTPS over the real control plane, its
    verifier on a clock the test can move."""
    cluster = KubernetesCluster(plane.api, namespace, component="brupop-apiserver")
    clock = ShiftedClock()
    keys = KubernetesIssuerKeys(ApiCalls(plane.api), clock, unknown_kid_seconds=1.0)
    options = ApiserverOptions(namespace=namespace, token_review_cache_seconds=cache_seconds)
    container = ApiserverContainer(options=options)
    container.cluster.override(cluster)
    container.token_verifier.override(KubernetesTokenVerifier(keys, clock))
    certs = make_certificates(tls)
    app = container.app()
    server = serve_in_thread(
        app, certfile=certs.cert_path, keyfile=certs.key_path, cert_check_seconds=0.0
    )
    mirror = container.agent_pods()
    try:
        with httpx.Client(base_url=server.base_url, verify=str(certs.ca_path)) as http:
            # Keys loaded and pods listed (readiness also waits for the shadow CRD, not here).
            wait_until(lambda: mirror.problem is None, "keys loaded, pods listed", seconds=20)
            yield Apiserver(http, clock, namespace, node, mirror)
    finally:
        server.stop()


@pytest.fixture
def apiserver(
    control_plane: ControlPlane, namespace: str, fake_node: str, tmp_path: Path
) -> Iterator[Apiserver]:
    yield from start_apiserver(control_plane, namespace, fake_node, tmp_path)


def test_an_agent_pods_token_is_accepted_with_its_node_uid_from_the_token(
    control_plane: ControlPlane, apiserver: Apiserver
) -> None:
    pod = agent_pod(control_plane, apiserver.namespace, "brupop-agent-a", apiserver.node)

    uid = apiserver.node_uid(token_of(control_plane, pod))

    assert uid == control_plane.core.read_node(apiserver.node).metadata.uid


def test_a_deleted_pods_token_is_refused_without_waiting_for_its_cached_decision(
    control_plane: ControlPlane, apiserver: Apiserver
) -> None:
    pod = agent_pod(control_plane, apiserver.namespace, "brupop-agent-a", apiserver.node)
    token = token_of(control_plane, pod)
    assert apiserver.status(token) == 200  # its decision cached

    control_plane.core.delete_namespaced_pod(
        pod.metadata.name, apiserver.namespace, grace_period_seconds=0
    )

    wait_until(
        lambda: apiserver.status(token) == 403,
        "the token refused",
        seconds=REVOKED_WITHIN_SECONDS,
    )


def test_an_expired_token_is_refused(control_plane: ControlPlane, apiserver: Apiserver) -> None:
    pod = agent_pod(control_plane, apiserver.namespace, "brupop-agent-a", apiserver.node)
    token = token_of(control_plane, pod, seconds=600)

    apiserver.clock.offset = timedelta(seconds=600 + LEEWAY_SECONDS + 1)  # past exp and leeway

    assert apiserver.status(token) == 401


def test_a_token_for_another_audience_is_refused(
    control_plane: ControlPlane, apiserver: Apiserver
) -> None:
    pod = agent_pod(control_plane, apiserver.namespace, "brupop-agent-a", apiserver.node)

    assert apiserver.status(token_of(control_plane, pod, audience="someone-else")) == 401


def test_a_token_of_another_service_account_is_refused(
    control_plane: ControlPlane, apiserver: Apiserver
) -> None:
    pod = agent_pod(
        control_plane, apiserver.namespace, "brupop-agent-b", apiserver.node, account="intruder"
    )

    assert apiserver.status(token_of(control_plane, pod)) == 403


def test_a_token_of_a_pod_on_another_node_is_refused(
    control_plane: ControlPlane, apiserver: Apiserver, other_node: str
) -> None:
    pod = agent_pod(control_plane, apiserver.namespace, "brupop-agent-c", other_node)

    assert apiserver.status(token_of(control_plane, pod)) == 403


def test_a_made_up_token_is_refused_without_a_signature_check(
    control_plane: ControlPlane, apiserver: Apiserver
) -> None:
    pod = agent_pod(control_plane, apiserver.namespace, "brupop-agent-a", apiserver.node)
    header, payload, _signature = token_of(control_plane, pod).split(".")

    assert apiserver.status(f"{header}.{payload}.AAAA") == 401
    assert apiserver.status("not-a-token") == 401


def test_tokens_signed_by_a_key_rotated_away_are_refused(
    control_plane: ControlPlane, namespace: str, fake_node: str, tmp_path: Path
) -> None:
    pod = agent_pod(control_plane, namespace, "brupop-agent-a", fake_node)
    old = token_of(control_plane, pod)
    served = start_apiserver(control_plane, namespace, fake_node, tmp_path, cache_seconds=0)
    for apiserver in served:
        assert apiserver.status(old) == 200

        restarted = subprocess.run(
            [SCRIPT, "restart", control_plane.folder, "kube-apiserver", "--new-signing-key"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert restarted.returncode == 0, restarted.stderr
        new = token_of(control_plane, pod)
        apiserver.clock.ahead += 1.0  # past the key set's rate limit on unknown-key fetches

        assert apiserver.status(new) == 200  # its new key ID makes the key set fetched again
        assert apiserver.status(old) == 401


def test_a_pod_a_finalizer_holds_is_refused_once_kube_apiserver_refuses_its_token(
    control_plane: ControlPlane, apiserver: Apiserver
) -> None:
    namespace = apiserver.namespace
    pod = agent_pod(control_plane, namespace, "brupop-agent-held", apiserver.node, [HOLD])
    token = token_of(control_plane, pod)
    try:
        control_plane.core.delete_namespaced_pod(
            pod.metadata.name, namespace, grace_period_seconds=0
        )
        held = control_plane.core.read_namespaced_pod(pod.metadata.name, namespace)
        assert held.metadata.deletion_timestamp is not None
        assert (apiserver.status(token), reviewed(control_plane, token)) == (200, True)

        # kube-apiserver refuses it 60 s past its deletionTimestamp (its grace period of 0).
        wait_until(lambda: not reviewed(control_plane, token), "TokenReview refuses", seconds=90)
        wait_until(
            lambda: apiserver.status(token) == 403, "refused", seconds=REVOKED_WITHIN_SECONDS
        )
    finally:
        patch = {"metadata": {"finalizers": None}}
        control_plane.core.patch_namespaced_pod(pod.metadata.name, namespace, patch)


def test_the_tokens_of_a_deleted_service_account_are_refused_without_waiting_for_their_cache(
    control_plane: ControlPlane, apiserver: Apiserver
) -> None:
    pod = agent_pod(control_plane, apiserver.namespace, "brupop-agent-a", apiserver.node)
    token = token_of(control_plane, pod)
    assert apiserver.status(token) == 200  # its decision cached

    control_plane.core.delete_namespaced_service_account(AGENT_SERVICE_ACCOUNT, apiserver.namespace)

    wait_until(
        lambda: apiserver.status(token) == 401,
        "the token refused",
        seconds=REVOKED_WITHIN_SECONDS,
    )
    assert not reviewed(control_plane, token)


def test_the_tokens_of_a_service_account_recreated_under_its_name_are_refused_despite_the_cache(
    control_plane: ControlPlane, apiserver: Apiserver
) -> None:
    namespace = apiserver.namespace
    pod = agent_pod(control_plane, namespace, "brupop-agent-a", apiserver.node)
    old = token_of(control_plane, pod)
    assert apiserver.status(old) == 200  # its decision cached

    control_plane.core.delete_namespaced_service_account(AGENT_SERVICE_ACCOUNT, namespace)
    meta = client.V1ObjectMeta(name=AGENT_SERVICE_ACCOUNT)
    control_plane.core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=meta)
    )

    wait_until(
        lambda: apiserver.status(old) == 401,
        "the old token refused",
        seconds=REVOKED_WITHIN_SECONDS,
    )
    assert not reviewed(control_plane, old)
    assert apiserver.status(token_of(control_plane, pod)) == 200  # the new account's token

"""Local token verification, one suite for both TokenVerifiers (the in-memory fake and the
JWT verifier): the Authorizer over the verifier and the watch-fed agent pod mirror accepts the
agent on its node and refuses every token TokenReview would refuse."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import COMPONENT_LABEL, Pod
from brupop.services.apiserver.authorization import (
    AGENT_SERVICE_ACCOUNT,
    AccessRequest,
    Authorizer,
)
from brupop.services.apiserver.authorization_pods import AgentPodMirror
from brupop.services.apiserver.errors import NotAllowedError, UnauthenticatedError
from tests.contract.cluster.token_issuers import MemoryIssuer, SigningIssuer, TokenIssuer
from tests.fakes.clock import FakeClock
from tests.support.polling import wait_until

NS = "brupop-bottlerocket-aws"
AGENT = {COMPONENT_LABEL: "agent"}


@pytest.fixture
def cluster() -> InMemoryCluster:
    cluster = InMemoryCluster(NS, clock=FakeClock())
    for node in ("n1", "n2"):
        cluster.add_node(node, uid=f"uid-{node}")
    return cluster


@pytest.fixture(params=["memory", "jwt"])
def issuer(request: pytest.FixtureRequest, cluster: InMemoryCluster) -> TokenIssuer:
    if request.param == "memory":
        return MemoryIssuer(cluster)
    return SigningIssuer(cluster)


@pytest.fixture
def mirror(cluster: InMemoryCluster, issuer: TokenIssuer) -> Iterator[AgentPodMirror]:
    mirror = AgentPodMirror(cluster.agent_pods, issuer.verifier, watch_seconds=0.2)
    mirror.start()
    wait_until(lambda: mirror.problem is None, "the mirror has loaded keys and listed pods")
    yield mirror
    mirror.stop()


@pytest.fixture
def authorizer(cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror) -> Authorizer:
    assert isinstance(cluster.clock, FakeClock)
    return Authorizer(
        token_reviewer=issuer.verifier,
        pods=cluster.pods,
        nodes=cluster.nodes,
        clock=cluster.clock,
        namespace=NS,
        cache_seconds=30,
        agent_pods=mirror,
    )


def agent(
    cluster: InMemoryCluster,
    mirror: AgentPodMirror,
    node: str = "n1",
    account: str = AGENT_SERVICE_ACCOUNT,
) -> Pod:
    """An agent pod on `node`, once the mirror has seen it."""
    pod = cluster.add_pod(
        NS, f"agent-{node}-{account}", node, labels=AGENT, service_account=account
    )
    wait_until(lambda: mirror.pod(pod.name) is not None, "the mirror sees the pod")
    return pod


def test_the_agent_on_its_node_is_allowed(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    pod = agent(cluster, mirror)

    caller = authorizer.authorize(AccessRequest("n1", "uid-n1", issuer.mint(pod)))

    assert (caller.pod_name, caller.node_uid) == (pod.name, "uid-n1")


def test_a_deleted_pods_cached_decision_is_dropped_and_its_token_refused(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    pod = agent(cluster, mirror)
    request = AccessRequest("n1", "uid-n1", issuer.mint(pod))
    authorizer.authorize(request)
    assert authorizer.cached(request) is not None

    cluster.pods.delete(NS, pod.name)
    wait_until(lambda: not mirror.bound(pod.name, pod.uid), "the mirror drops the pod", seconds=2)

    assert authorizer.cached(request) is None
    with pytest.raises((NotAllowedError, UnauthenticatedError)):
        authorizer.authorize(request)


def test_a_decision_outlives_the_review_cache_period_until_its_token_expires(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    request = AccessRequest("n1", "uid-n1", issuer.mint(agent(cluster, mirror), seconds=600))
    authorizer.authorize(request)
    assert isinstance(cluster.clock, FakeClock)

    cluster.clock.advance(120)  # four review cache periods: the pod and the key still stand
    kept = authorizer.cached(request)
    cluster.clock.advance(500)  # past the token's expiry

    assert kept is not None
    assert authorizer.cached(request) is None


def test_a_cached_decision_is_dropped_once_the_issuer_withdraws_its_key(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    request = AccessRequest("n1", "uid-n1", issuer.mint(agent(cluster, mirror)))
    authorizer.authorize(request)
    assert authorizer.cached(request) is not None

    issuer.withdraw(request.token)

    assert authorizer.cached(request) is None
    with pytest.raises(UnauthenticatedError):
        authorizer.authorize(request)


def test_an_expired_token_is_refused(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    token = issuer.mint(agent(cluster, mirror), seconds=600)
    assert isinstance(cluster.clock, FakeClock)

    cluster.clock.advance(700)

    with pytest.raises(UnauthenticatedError):
        authorizer.authorize(AccessRequest("n1", "uid-n1", token))


def test_a_token_for_another_audience_is_refused(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    token = issuer.mint(agent(cluster, mirror), audience="https://kubernetes.default.svc")

    with pytest.raises(UnauthenticatedError):
        authorizer.authorize(AccessRequest("n1", "uid-n1", token))


def test_a_token_of_another_service_account_is_refused(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    token = issuer.mint(agent(cluster, mirror, account="intruder"))

    with pytest.raises(NotAllowedError, match="agent service account"):
        authorizer.authorize(AccessRequest("n1", "uid-n1", token))


def test_a_token_of_a_pod_on_another_node_is_refused(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    token = issuer.mint(agent(cluster, mirror, node="n2"))

    with pytest.raises(NotAllowedError, match="does not run on that node"):
        authorizer.authorize(AccessRequest("n1", "uid-n1", token))


def test_a_made_up_token_is_refused_and_the_refusal_remembered(
    issuer: TokenIssuer, authorizer: Authorizer
) -> None:
    request = AccessRequest("n1", "uid-n1", "eyJhbGciOiJSUzI1NiJ9.e30.AAAA")

    with pytest.raises(UnauthenticatedError):
        authorizer.authorize(request)
    with pytest.raises(UnauthenticatedError):
        authorizer.cached(request)

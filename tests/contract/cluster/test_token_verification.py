"""Local token verification, one suite for both TokenVerifiers (the in-memory fake and the
JWT verifier): the Authorizer over the verifier and the watch-fed agent pod and ServiceAccount
mirrors accepts the agent on its node and refuses every token TokenReview would refuse."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import COMPONENT_LABEL, Pod
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.services.apiserver.authorization.authorizer import (
    AGENT_SERVICE_ACCOUNT,
    AccessRequest,
    Authorizer,
)
from brupop.services.apiserver.authorization.errors import NotAllowedError, UnauthenticatedError
from brupop.services.apiserver.authorization.pods import AgentPodMirror
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
    mirror = AgentPodMirror(
        cluster.agent_pods, cluster.service_accounts, issuer.verifier, watch_seconds=0.2
    )
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
    """An agent pod on `node`, once the mirrors have seen it and its account."""
    pod = cluster.add_pod(
        NS, f"agent-{node}-{account}", node, labels=AGENT, service_account=account
    )
    wait_until(lambda: mirror.pod(pod.name) is not None, "the mirror sees the pod")
    seen = lambda: mirror.accounts.account(account) is not None  # noqa: E731
    wait_until(seen, "the mirror sees the pod's account")
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
    gone = lambda: not mirror.bound(pod.name, pod.uid, cluster.clock.now())  # noqa: E731
    wait_until(gone, "the mirror drops the pod", seconds=2)

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


def test_a_pod_a_finalizer_holds_is_refused_once_its_grace_period_and_the_leeway_pass(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    pod = agent(cluster, mirror)
    request = AccessRequest("n1", "uid-n1", issuer.mint(pod))
    assert isinstance(cluster.clock, FakeClock)
    grace_ends = cluster.clock.now() + timedelta(seconds=30)

    cluster.set_pod_deleting(NS, pod.name, grace_ends)
    wait_until(lambda: mirror_sees_deletion(mirror, pod.name), "the mirror sees the delete")
    cluster.clock.advance(30 + 60)  # kube-apiserver still accepts its tokens here
    accepted = authorizer.authorize(request)
    cluster.clock.advance(1)

    assert accepted.pod_name == pod.name
    assert authorizer.cached(request) is None
    with pytest.raises((NotAllowedError, UnauthenticatedError)):
        authorizer.authorize(request)


def test_the_tokens_of_a_deleted_service_account_are_refused(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    request = AccessRequest("n1", "uid-n1", issuer.mint(agent(cluster, mirror)))
    authorizer.authorize(request)

    cluster.service_accounts.remove(NS, AGENT_SERVICE_ACCOUNT)
    wait_until(lambda: authorizer.cached(request) is None, "the decision dropped", seconds=2)

    with pytest.raises(UnauthenticatedError):
        authorizer.authorize(request)


def test_the_tokens_of_a_service_account_recreated_under_its_name_are_refused(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror, authorizer: Authorizer
) -> None:
    pod = agent(cluster, mirror)
    old = AccessRequest("n1", "uid-n1", issuer.mint(pod))
    authorizer.authorize(old)

    cluster.service_accounts.remove(NS, AGENT_SERVICE_ACCOUNT)
    cluster.service_accounts.add(NS, AGENT_SERVICE_ACCOUNT)
    new = AccessRequest("n1", "uid-n1", issuer.mint(pod))  # a token of the new account

    assert authorizer.authorize(new).pod_name == pod.name
    wait_until(lambda: authorizer.cached(old) is None, "the old decision dropped", seconds=2)
    with pytest.raises(UnauthenticatedError):
        authorizer.authorize(old)


def test_a_replayed_token_of_a_deleted_pod_costs_one_pod_read_in_all(
    cluster: InMemoryCluster, issuer: TokenIssuer, mirror: AgentPodMirror
) -> None:
    assert isinstance(cluster.clock, FakeClock)
    pods = CountedPods(cluster.pods)
    authorizer = Authorizer(
        token_reviewer=issuer.verifier,
        pods=pods,
        nodes=cluster.nodes,
        clock=cluster.clock,
        namespace=NS,
        cache_seconds=30,
        refusal_seconds=0,
        agent_pods=mirror,
    )
    pod = agent(cluster, mirror)
    request = AccessRequest("n1", "uid-n1", issuer.mint(pod))
    cluster.pods.delete(NS, pod.name)
    wait_until(lambda: mirror.pod(pod.name) is None, "the mirror drops the pod", seconds=2)

    for _ in range(200):
        with pytest.raises((NotAllowedError, UnauthenticatedError)):
            authorizer.authorize(request)

    assert pods.gets <= 1


class CountedPods:
    """A PodRepository whose reads by name are counted."""

    def __init__(self, pods: PodRepository) -> None:
        self._pods = pods
        self.gets = 0

    def get(self, namespace: str, name: str) -> Pod:
        self.gets += 1
        return self._pods.get(namespace, name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pods, name)


def mirror_sees_deletion(mirror: AgentPodMirror, name: str) -> bool:
    pod = mirror.pod(name)
    return pod is not None and pod.deletion_timestamp is not None

"""Authorizer: only the agent pod on the named node passes; positive answers are cached briefly."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import COMPONENT_LABEL, TokenIdentity
from brupop.ports.errors import UnavailableError
from brupop.services.apiserver.authorization.authorizer import (
    AGENT_SERVICE_ACCOUNT,
    AccessRequest,
    Authorizer,
)
from brupop.services.apiserver.authorization.errors import NotAllowedError, UnauthenticatedError
from brupop.services.apiserver.authorization.token_expiry import token_expiry
from tests.fakes.clock import FakeClock

NS = "brupop-bottlerocket-aws"
AGENT_LABELS = {COMPONENT_LABEL: "agent"}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cluster(clock: FakeClock) -> InMemoryCluster:
    cluster = InMemoryCluster(NS, clock=clock)
    for node in ("n1", "n2"):
        cluster.add_node(node, uid=f"uid-{node}")
        cluster.add_pod(
            NS, f"agent-{node}", node, labels=AGENT_LABELS, service_account=AGENT_SERVICE_ACCOUNT
        )
    return cluster


def authorizer(
    cluster: InMemoryCluster, clock: FakeClock, cache: float = 30, refusal: float = 5
) -> Authorizer:
    return Authorizer(
        token_reviewer=cluster.token_reviewer,
        pods=cluster.pods,
        nodes=cluster.nodes,
        clock=clock,
        namespace=NS,
        cache_seconds=cache,
        refusal_seconds=refusal,
    )


def test_the_agent_on_the_named_node_is_allowed(cluster: InMemoryCluster, clock: FakeClock) -> None:
    token = cluster.issue_token(NS, "agent-n1")

    caller = authorizer(cluster, clock).authorize(AccessRequest("n1", "uid-n1", token))

    assert (caller.node_name, caller.node_uid, caller.pod_name) == ("n1", "uid-n1", "agent-n1")


def test_without_a_uid_the_caller_learns_its_nodes_uid(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    token = cluster.issue_token(NS, "agent-n2")

    caller = authorizer(cluster, clock).authorize(AccessRequest("n2", None, token))

    assert caller.node_uid == "uid-n2"


@pytest.mark.parametrize(
    ("case", "error"),
    [
        ("unknown token", UnauthenticatedError),
        ("token for another audience", UnauthenticatedError),
        ("agent of another node", NotAllowedError),
        ("pod without the agent label", NotAllowedError),
        ("pod with another service account", NotAllowedError),
        ("agent-labelled pod in another namespace", NotAllowedError),
        ("user token bound to no pod", NotAllowedError),
        ("wrong node uid", NotAllowedError),
        ("node that does not exist", NotAllowedError),
    ],
)
def test_requests_that_are_not_the_agent_of_that_node_are_refused(
    cluster: InMemoryCluster, clock: FakeClock, case: str, error: type[Exception]
) -> None:
    cluster.add_pod(NS, "intruder", "n1", service_account=AGENT_SERVICE_ACCOUNT)
    cluster.add_pod(NS, "impostor", "n1", labels=AGENT_LABELS, service_account="default")
    cluster.add_pod(
        "other", "elsewhere", "n1", labels=AGENT_LABELS, service_account=AGENT_SERVICE_ACCOUNT
    )
    agent = cluster.issue_token(NS, "agent-n1")
    requests = {
        "unknown token": AccessRequest("n1", "uid-n1", "not-a-token"),
        "token for another audience": AccessRequest(
            "n1", "uid-n1", cluster.issue_token(NS, "agent-n1", audiences=("kubernetes",))
        ),
        "agent of another node": AccessRequest("n1", "uid-n1", cluster.issue_token(NS, "agent-n2")),
        "pod without the agent label": AccessRequest(
            "n1", "uid-n1", cluster.issue_token(NS, "intruder")
        ),
        "pod with another service account": AccessRequest(
            "n1", "uid-n1", cluster.issue_token(NS, "impostor")
        ),
        "agent-labelled pod in another namespace": AccessRequest(
            "n1", "uid-n1", cluster.issue_token("other", "elsewhere")
        ),
        "user token bound to no pod": AccessRequest(
            "n1",
            "uid-n1",
            cluster.issue_user_token(f"system:serviceaccount:{NS}:{AGENT_SERVICE_ACCOUNT}"),
        ),
        "wrong node uid": AccessRequest("n1", "uid-n2", agent),
        "node that does not exist": AccessRequest("n3", None, agent),
    }

    with pytest.raises(error):
        authorizer(cluster, clock).authorize(requests[case])


def test_repeated_requests_within_the_cache_time_cost_one_review(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    token = cluster.issue_token(NS, "agent-n1")
    auth = authorizer(cluster, clock, cache=30)
    before = cluster.token_reviewer.review_count

    for _ in range(20):
        auth.authorize(AccessRequest("n1", "uid-n1", token))
        clock.advance(1)

    assert cluster.token_reviewer.review_count - before == 1
    clock.advance(10)
    auth.authorize(AccessRequest("n1", "uid-n1", token))
    assert cluster.token_reviewer.review_count - before == 2


def test_a_cached_answer_never_outlives_the_token(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    token = cluster.issue_token(NS, "agent-n1", ttl_seconds=10)
    auth = authorizer(cluster, clock, cache=30)
    auth.authorize(AccessRequest("n1", "uid-n1", token))

    clock.advance(11)

    assert auth.cached(AccessRequest("n1", "uid-n1", token)) is None
    with pytest.raises(UnauthenticatedError):
        auth.authorize(AccessRequest("n1", "uid-n1", token))


def test_without_a_refusal_cache_every_refused_request_is_reviewed(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    auth = authorizer(cluster, clock, refusal=0)
    before = cluster.token_reviewer.review_count

    for _ in range(3):
        with pytest.raises(UnauthenticatedError):
            auth.authorize(AccessRequest("n1", "uid-n1", "bogus"))

    assert cluster.token_reviewer.review_count - before == 3


def test_a_failing_token_review_surfaces_as_unavailable(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    token = cluster.issue_token(NS, "agent-n1")
    cluster.token_reviewer.unavailable = True

    with pytest.raises(UnavailableError):
        authorizer(cluster, clock).authorize(AccessRequest("n1", "uid-n1", token))


class ReviewerWithoutExpiry:
    """A TokenReview that, like the real one, does not say when the token expires."""

    def __init__(self, identity: TokenIdentity) -> None:
        self._identity = identity
        self.review_count = 0

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        self.review_count += 1
        return self._identity


def jwt_expiring_at(moment: datetime) -> str:
    def part(document: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part({'exp': int(moment.timestamp())})}.c2lnbmF0dXJl"


def test_without_an_expiry_in_the_review_the_cache_ends_at_the_jwt_exp(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    pod = cluster.pods.get(NS, "agent-n1")
    reviewer = ReviewerWithoutExpiry(
        TokenIdentity(
            authenticated=True,
            username=f"system:serviceaccount:{NS}:{AGENT_SERVICE_ACCOUNT}",
            audiences=("brupop-apiserver",),
            pod_name=pod.name,
            pod_uid=pod.uid,
        )
    )
    auth = Authorizer(
        token_reviewer=reviewer,
        pods=cluster.pods,
        nodes=cluster.nodes,
        clock=clock,
        namespace=NS,
        cache_seconds=30,
    )
    token = jwt_expiring_at(clock.now() + timedelta(seconds=10))
    request = AccessRequest("n1", "uid-n1", token)
    auth.authorize(request)
    clock.advance(5)
    assert auth.cached(request) is not None

    clock.advance(6)

    assert auth.cached(request) is None
    auth.authorize(request)
    assert reviewer.review_count == 2


@pytest.mark.parametrize(
    "token", ["opaque-token", "a.b.c", "a.bnVsbA.c", "a.eyJleHAiOiAidG9tb3Jyb3cifQ.c"]
)
def test_tokens_without_a_readable_exp_have_no_expiry(token: str) -> None:
    assert token_expiry(token) is None


def test_a_refused_token_is_not_reviewed_again_until_its_refusal_expires(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    auth = authorizer(cluster, clock, refusal=5)
    request = AccessRequest("n1", "uid-n1", "made-up")
    before = cluster.token_reviewer.review_count

    for _ in range(10):
        with pytest.raises(UnauthenticatedError):
            auth.authorize(request)
    with pytest.raises(UnauthenticatedError, match="not accepted"):
        auth.cached(request)
    reviews_while_remembered = cluster.token_reviewer.review_count - before
    clock.advance(5)
    with pytest.raises(UnauthenticatedError):
        auth.authorize(request)

    assert reviews_while_remembered == 1
    assert cluster.token_reviewer.review_count - before == 2


def test_a_refusal_is_remembered_by_token_not_for_other_tokens(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    auth = authorizer(cluster, clock)
    with pytest.raises(UnauthenticatedError):
        auth.authorize(AccessRequest("n1", "uid-n1", "made-up"))

    token = cluster.issue_token(NS, "agent-n1")

    assert auth.authorize(AccessRequest("n1", "uid-n1", token)).node_name == "n1"


def _decided(cluster: InMemoryCluster, clock: FakeClock) -> tuple[Authorizer, AccessRequest]:
    """An agent's request, just decided by an authorizer that keeps decisions 40 s."""
    request = AccessRequest("n1", "uid-n1", cluster.issue_token(NS, "agent-n1"))
    auth = authorizer(cluster, clock, cache=40)
    auth.authorize(request)
    return auth, request


def test_a_decision_is_due_for_renewal_in_the_last_quarter_of_its_life(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    auth, request = _decided(cluster, clock)

    clock.advance(29)
    assert auth.renewal_due(request) is False
    clock.advance(2)
    assert auth.renewal_due(request) is True


def test_a_renewal_reviews_the_token_again_and_the_decision_lives_on(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    auth, request = _decided(cluster, clock)
    clock.advance(31)
    before = cluster.token_reviewer.review_count

    auth.renew(request)

    assert cluster.token_reviewer.review_count - before == 1
    assert auth.renewal_due(request) is False
    clock.advance(20)  # past the first decision's end
    assert auth.cached(request) is not None


def test_a_renewal_that_finds_the_token_withdrawn_drops_the_decision(
    cluster: InMemoryCluster, clock: FakeClock
) -> None:
    auth, request = _decided(cluster, clock)
    clock.advance(31)
    cluster.token_reviewer.withdraw(request.token)

    with pytest.raises(UnauthenticatedError):
        auth.renew(request)
    with pytest.raises(UnauthenticatedError):  # the refusal, remembered for a few seconds
        auth.cached(request)
    clock.advance(6)
    assert auth.cached(request) is None  # then no decision: the next request is reviewed

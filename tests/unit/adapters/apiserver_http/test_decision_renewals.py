"""A cached decision due for renewal is renewed off the request's path: the request passes on the
cached decision at once, the token is reviewed again in the background, at most half the review
threads' worth at once, and nothing is renewed while half those threads are busy."""

from __future__ import annotations

import anyio
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from brupop.adapters.apiserver_http.routes.authorization import (
    AuthorizationMiddleware,
    DecisionRenewals,
)
from brupop.adapters.apiserver_http.routes.metrics import ApiserverMetrics
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import COMPONENT_LABEL
from brupop.services.apiserver.authorization.authorizer import (
    AGENT_SERVICE_ACCOUNT,
    AccessRequest,
    Authorizer,
)
from tests.fakes.clock import FakeClock
from tests.support.polling import eventually
from tests.unit.adapters.apiserver_http.asgi_messages import sender, status_of

NS = "brupop-bottlerocket-aws"
RESOURCE = "/bottlerocket-node-resource"
CACHE_SECONDS = 40  # due for renewal after 30


async def _handler(scope: Scope, receive: Receive, send: Send) -> None:
    await Response("reached the handler")(scope, receive, send)


async def _receive() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


def _agents(count: int) -> tuple[InMemoryCluster, FakeClock, Authorizer, list[AccessRequest]]:
    """Agents whose requests were authorized 31 s ago: their decisions are due for renewal."""
    clock = FakeClock()
    cluster = InMemoryCluster(NS, clock=clock)
    for node in (f"n{index}" for index in range(count)):
        cluster.add_node(node, uid=f"uid-{node}")
        cluster.add_pod(
            NS,
            f"agent-{node}",
            node,
            labels={COMPONENT_LABEL: "agent"},
            service_account=AGENT_SERVICE_ACCOUNT,
        )
    authorizer = Authorizer(
        token_reviewer=cluster.token_reviewer,
        pods=cluster.pods,
        nodes=cluster.nodes,
        clock=clock,
        namespace=NS,
        cache_seconds=CACHE_SECONDS,
    )
    requests = [
        AccessRequest(f"n{index}", f"uid-n{index}", cluster.issue_token(NS, f"agent-n{index}"))
        for index in range(count)
    ]
    for request in requests:
        authorizer.authorize(request)
    clock.advance(31)
    return cluster, clock, authorizer, requests


def _agent() -> tuple[InMemoryCluster, FakeClock, Authorizer, AccessRequest]:
    cluster, clock, authorizer, requests = _agents(1)
    return cluster, clock, authorizer, requests[0]


def _scope(request: AccessRequest) -> Scope:
    headers = {
        "brupopnodename": request.node_name,
        "brupopnodeuid": request.node_uid or "",
        "brupopk8sauthtoken": request.token,
    }
    return {
        "type": "http",
        "method": "GET",
        "path": RESOURCE,
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("10.0.0.1", 40000),
    }


def _middleware(authorizer: Authorizer, renewals: DecisionRenewals, limiter: object) -> object:
    return AuthorizationMiddleware(
        _handler,
        authorizer=authorizer,
        metrics=ApiserverMetrics(lambda: 0),
        protected={RESOURCE: True},
        limiter=lambda: limiter,
        renewals=renewals,
    )


def test_a_request_on_a_decision_due_for_renewal_passes_and_the_token_is_reviewed_again() -> None:
    cluster, clock, authorizer, request = _agent()
    reviews_before = cluster.token_reviewer.review_count
    answer: list[Message] = []

    async def run() -> DecisionRenewals:
        limiter = anyio.CapacityLimiter(4)
        renewals = DecisionRenewals(authorizer, lambda: limiter)
        middleware = _middleware(authorizer, renewals, limiter)
        await middleware(_scope(request), _receive, sender(answer))  # type: ignore[operator]
        await eventually(lambda: renewals.renewed == 1, "the renewal")
        return renewals

    anyio.run(run)

    assert status_of(answer) == 200
    assert cluster.token_reviewer.review_count - reviews_before == 1
    assert authorizer.renewal_due(request) is False
    clock.advance(CACHE_SECONDS - 31 + 1)  # past the first decision's end
    assert authorizer.cached(request) is not None


def test_no_renewal_starts_while_half_the_review_threads_are_busy() -> None:
    cluster, _clock, authorizer, request = _agent()
    reviews_before = cluster.token_reviewer.review_count
    answer: list[Message] = []
    renewed: list[int] = []

    async def run() -> None:
        limiter = anyio.CapacityLimiter(4)
        for holder in range(3):
            await limiter.acquire_on_behalf_of(holder)
        renewals = DecisionRenewals(authorizer, lambda: limiter)
        middleware = _middleware(authorizer, renewals, limiter)
        await middleware(_scope(request), _receive, sender(answer))  # type: ignore[operator]
        renewed.append(len(renewals._tasks))
        for holder in range(3):
            limiter.release_on_behalf_of(holder)

    anyio.run(run)

    assert status_of(answer) == 200
    assert renewed == [0]
    assert cluster.token_reviewer.review_count == reviews_before
    assert authorizer.renewal_due(request) is True


def test_a_burst_of_requests_due_for_renewal_starts_half_the_review_threads_worth() -> None:
    _cluster, _clock, authorizer, requests = _agents(6)
    started: list[int] = []

    async def run() -> None:
        limiter = anyio.CapacityLimiter(4)
        renewals = DecisionRenewals(authorizer, lambda: limiter)
        for request in requests:  # in one turn of the loop: no renewal has taken a thread yet
            renewals.consider(request)
        started.append(len(renewals._tasks))
        await eventually(lambda: not renewals._tasks, "the renewals to end")

    anyio.run(run)

    assert started == [2]
    assert [authorizer.renewal_due(request) for request in requests].count(False) == 2

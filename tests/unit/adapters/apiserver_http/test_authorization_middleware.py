"""The authorization middleware's bounds on TokenReviews: past the reviews running and the few
waiting, a request with a token still to review is refused at once with 503; while the reviews
are all busy, one address with its share in flight is refused at once with 429."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from brupop.adapters.apiserver_http.routes.authorization import (
    AuthorizationMiddleware,
    DecisionRenewals,
)
from brupop.adapters.apiserver_http.routes.metrics import ApiserverMetrics
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.tokens import InMemoryTokenReviewer
from brupop.domain.cluster.objects import TokenIdentity
from brupop.services.apiserver.authorization.authorizer import Authorizer
from tests.support.polling import eventually
from tests.unit.adapters.apiserver_http.asgi_messages import sender, status_of

NS = "brupop-bottlerocket-aws"
RESOURCE = "/bottlerocket-node-resource"


class HeldTokenReviewer(InMemoryTokenReviewer):
    """A TokenReview that answers only once `gate` opens (after 30 s regardless); counts the
    reviews started and finished."""

    def __init__(self, cluster: InMemoryCluster) -> None:
        super().__init__(cluster.clock, cluster.pods.store, cluster.service_accounts.store)
        self.gate = threading.Event()
        self.started = 0
        self.finished = 0

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        self.started += 1
        self.gate.wait(30)
        self.finished += 1
        return super().review(token, audiences)


def scope(token: str, address: str) -> Scope:
    headers = {"brupopnodename": "n1", "brupopnodeuid": "uid-n1", "brupopk8sauthtoken": token}
    return {
        "type": "http",
        "method": "GET",
        "path": RESOURCE,
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": (address, 40000),
    }


async def receive() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


async def handler(_scope: Scope, _receive: Receive, send: Send) -> None:
    await Response("reached the handler")(_scope, _receive, send)


def held_reviews() -> tuple[HeldTokenReviewer, Authorizer]:
    """A held TokenReview and an authorizer that reviews through it, on a cluster of their own."""
    cluster = InMemoryCluster(NS)
    reviewer = HeldTokenReviewer(cluster)
    authorizer = Authorizer(
        token_reviewer=reviewer,
        pods=cluster.pods,
        nodes=cluster.nodes,
        clock=cluster.clock,
        namespace=NS,
        cache_seconds=30,
    )
    return reviewer, authorizer


def middleware_with(
    authorizer: Authorizer, limiter: anyio.CapacityLimiter, *, waiting: int, per_client: int
) -> Any:
    return AuthorizationMiddleware(
        handler,
        authorizer=authorizer,
        metrics=ApiserverMetrics(lambda: 0),
        protected={RESOURCE: True},
        limiter=lambda: limiter,
        renewals=DecisionRenewals(authorizer, lambda: limiter),
        waiting=waiting,
        per_client=per_client,
    )


class Held:
    """What came of requests whose reviews were held, and of one more sent meanwhile."""

    def __init__(self, held: int) -> None:
        self.held: list[list[Message]] = [[] for _ in range(held)]
        self.last: list[Message] = []
        self.finished_when_last_answered = -1
        self.started = 0


def one_more_while_held(
    held: list[Scope],
    last: Scope,
    *,
    threads: int,
    waiting: int,
    per_client: int,
    settled: Callable[[anyio.CapacityLimiter], bool],
) -> Held:
    """Send `held` (the first until its review runs, the rest until `settled`), then `last`,
    all with their reviews held; the reviews are let go once `last` is answered."""
    reviewer, authorizer = held_reviews()
    outcome = Held(len(held))

    async def run() -> None:
        limiter = anyio.CapacityLimiter(threads)
        middleware = middleware_with(authorizer, limiter, waiting=waiting, per_client=per_client)
        async with anyio.create_task_group() as group:
            group.start_soon(middleware, held[0], receive, sender(outcome.held[0]))
            await eventually(lambda: reviewer.started == 1, "the first review to run")
            for request, answer in zip(held[1:], outcome.held[1:], strict=True):
                group.start_soon(middleware, request, receive, sender(answer))
            await eventually(lambda: settled(limiter), "the held requests to settle")
            with anyio.fail_after(20):
                await middleware(last, receive, sender(outcome.last))
            outcome.finished_when_last_answered = reviewer.finished
            reviewer.gate.set()

    anyio.run(run)
    outcome.started = reviewer.started
    return outcome


def test_past_the_reviews_running_and_waiting_a_new_token_is_refused_at_once() -> None:
    outcome = one_more_while_held(
        [scope("a", "10.0.0.1"), scope("b", "10.0.0.2")],
        scope("c", "10.0.0.3"),
        threads=1,
        waiting=1,
        per_client=2,
        settled=lambda limiter: limiter.statistics().tasks_waiting == 1,  # the second waits
    )

    assert status_of(outcome.last) == 503
    assert outcome.finished_when_last_answered == 0  # at once, not after the held review
    assert [status_of(answer) for answer in outcome.held] == [401, 401]
    assert outcome.started == 2


def test_while_reviews_are_busy_an_address_with_its_share_in_flight_is_refused_at_once() -> None:
    # Another address still gets its turn in the queue, while the address whose review is
    # running is refused more at once.
    outcome = one_more_while_held(
        [scope("a", "10.0.0.9"), scope("b", "10.0.0.8")],
        scope("c", "10.0.0.9"),
        threads=1,
        waiting=10,
        per_client=1,
        settled=lambda limiter: True,
    )

    assert status_of(outcome.last) == 429
    assert outcome.finished_when_last_answered == 0  # at once, not after the running review
    assert [status_of(answer) for answer in outcome.held] == [401, 401]
    assert outcome.started == 2


def test_a_burst_from_one_address_in_one_turn_gets_only_the_review_threads() -> None:
    reviewer, authorizer = held_reviews()
    answers: list[list[Message]] = [[] for _ in range(6)]

    async def run() -> None:
        limiter = anyio.CapacityLimiter(2)
        middleware = middleware_with(authorizer, limiter, waiting=10, per_client=1)
        async with anyio.create_task_group() as group:
            # All six are admitted or refused before any of them has taken a review thread.
            for index, answer in enumerate(answers):
                group.start_soon(
                    middleware, scope(f"t{index}", "10.0.0.7"), receive, sender(answer)
                )
            await eventually(
                lambda: sum(1 for answer in answers if answer) == 4, "four answered at once"
            )
            reviewer.gate.set()

    anyio.run(run)

    assert [status_of(answer) for answer in answers] == [401, 401, 429, 429, 429, 429]
    assert reviewer.started == 2

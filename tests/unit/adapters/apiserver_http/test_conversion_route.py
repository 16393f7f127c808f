"""The `/crdconvert` route's bounds, driven at the ASGI level over a converter in this process: a
review whose body does not arrive in time is a 408, past the reviews taken in and the few waiting
the next is refused at once, and the worker's refusals reach the caller as short errors."""

from __future__ import annotations

import json

import anyio
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Message, Receive, Scope

from brupop.adapters.apiserver_http.conversion.answer import answer_to
from brupop.adapters.apiserver_http.conversion.worker_process import ConversionFailedError
from brupop.adapters.apiserver_http.routes.closing import Closing
from brupop.adapters.apiserver_http.routes.conversion_webhook import ConversionRoute, Places
from tests.support.polling import eventually
from tests.unit.adapters.apiserver_http.asgi_messages import sender, status_of

REVIEW = json.dumps(
    {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "r", "desiredAPIVersion": "brupop.bottlerocket.aws/v1", "objects": []},
    }
).encode()


class InProcessConverter:
    """The worker's conversion, run in this process."""

    def convert(self, body: bytes) -> bytes:
        return answer_to(body)


class RefusingConverter:
    """A worker that refuses every review the way a worker over its deadline does."""

    def convert(self, body: bytes) -> bytes:
        raise ConversionFailedError(503, "the conversion took too long")


def app(route: ConversionRoute) -> Starlette:
    return Starlette(routes=[Route("/crdconvert", route.answer, methods=["POST"])])


def scope() -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "path": "/crdconvert",
        "raw_path": b"/crdconvert",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "server": ("127.0.0.1", 8444),
        "client": ("127.0.0.1", 50000),
        "scheme": "https",
        "root_path": "",
    }


def body_that_never_ends(read: list[bool] | None = None) -> Receive:
    """A client that sends the start of a review, then nothing more (until it is cancelled);
    `read` gets True once the route has read that start."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            if read is not None:
                read.append(True)
            return {"type": "http.request", "body": b'{"apiVersion"', "more_body": True}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    return receive


def whole_body() -> Receive:
    """A client that sends a whole review, then waits for the answer (as a server's `receive`
    does, it blocks until the client hangs up, here never)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": REVIEW, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    return receive


def test_a_review_whose_body_does_not_arrive_in_time_is_a_408() -> None:
    route = ConversionRoute(InProcessConverter(), closing=Closing(), body_seconds=0.2)
    messages: list[Message] = []

    async def run() -> None:
        with anyio.fail_after(5):
            await app(route)(scope(), body_that_never_ends(), sender(messages))

    anyio.run(run)

    assert status_of(messages) == 408


def test_past_the_reviews_taken_in_and_waiting_the_next_is_refused_at_once() -> None:
    route = ConversionRoute(
        InProcessConverter(), closing=Closing(), big=Places(at_once=1, waiting=1), body_seconds=30
    )
    slow: list[Message] = []
    queued: list[Message] = []
    refused: list[Message] = []
    slow_read: list[bool] = []

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(app(route), scope(), body_that_never_ends(slow_read), sender(slow))
            await eventually(lambda: slow_read, "the slow review to hold the only place")
            group.start_soon(app(route), scope(), whole_body(), sender(queued))
            await eventually(lambda: route.waiting_for_place() == 1, "the next one to wait")
            with anyio.fail_after(20):  # a bound for a broken route, below the slow one's 30 s
                await app(route)(scope(), whole_body(), sender(refused))
            group.cancel_scope.cancel()

    anyio.run(run)

    assert status_of(refused) == 503
    assert status_of(queued) is None and status_of(slow) is None  # both still in their turn


def test_a_review_within_the_bounds_is_answered() -> None:
    messages: list[Message] = []

    async def run() -> None:
        with anyio.fail_after(5):
            await app(ConversionRoute(InProcessConverter(), closing=Closing()))(
                scope(), whole_body(), sender(messages)
            )

    anyio.run(run)

    assert status_of(messages) == 200
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    assert json.loads(body)["response"]["result"] == {"status": "Success"}


def test_a_worker_refusal_reaches_the_caller_as_a_short_error() -> None:
    messages: list[Message] = []

    async def run() -> None:
        with anyio.fail_after(5):
            await app(ConversionRoute(RefusingConverter(), closing=Closing()))(
                scope(), whole_body(), sender(messages)
            )

    anyio.run(run)

    assert status_of(messages) == 503
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    assert json.loads(body) == {"error": "the conversion took too long"}

"""Which review the conversion worker takes next, driven at the ASGI level over a converter that
holds each review until released: a one-shadow review goes before the big ones waiting, a caller
with fewer reviews in goes first, and reviews still waiting when the server begins to stop are
answered 503 at once while the one converting finishes."""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
import anyio.abc
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Message, Scope

from brupop.adapters.apiserver_http.routes.closing import Closing
from brupop.adapters.apiserver_http.routes.conversion_webhook import (
    SMALL_REVIEW_BYTES,
    ConversionRoute,
)

SMALL = b"small"
BIG = b"big"


class HeldConverter:
    """Converts nothing until released; records the order in which reviews reached it."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.released = threading.Event()

    def convert(self, body: bytes) -> bytes:
        self.order.append(json.loads(body)["tag"])
        self.released.wait(10)
        return b"{}"


def body(tag: str, size: bytes) -> bytes:
    """A review body tagged `tag`: small under the small bound, big over it."""
    length = 100 if size == SMALL else SMALL_REVIEW_BYTES + 1000
    head = json.dumps({"tag": tag, "pad": ""}).encode()[:-2]
    return head + b"x" * (length - len(head) - 2) + b'"}'


def call(
    route: ConversionRoute, tag: str, size: bytes, statuses: dict[str, int], client: str
) -> Callable[[], Coroutine[Any, Any, None]]:
    """The coroutine function posting one review from `client`, its status put in `statuses`."""
    data = body(tag, size)
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "path": "/crdconvert",
        "raw_path": b"/crdconvert",
        "query_string": b"",
        "headers": [(b"content-length", str(len(data)).encode())],
        "server": ("127.0.0.1", 8444),
        "client": (client, 50000),
        "scheme": "https",
        "root_path": "",
    }
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": data, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            statuses[tag] = message["status"]

    app = Starlette(routes=[Route("/crdconvert", route.answer, methods=["POST"])])

    async def run() -> None:
        await app(scope, receive, send)

    return run


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(10):
        while not condition():
            await anyio.sleep(0.005)


def reached_worker(
    route: ConversionRoute, converter: HeldConverter, count: int
) -> Callable[[], bool]:
    """Whether `count` reviews have reached the worker or wait for it."""
    return lambda: len(converter.order) + route.waiting_for_worker() == count


def run_with(script: Callable[[anyio.abc.TaskGroup], Awaitable[None]]) -> None:
    async def main() -> None:
        async with anyio.create_task_group() as group:
            await script(group)

    anyio.run(main)


def test_a_one_shadow_review_is_converted_before_the_big_ones_waiting() -> None:
    converter = HeldConverter()
    route = ConversionRoute(converter, closing=Closing())
    statuses: dict[str, int] = {}

    async def script(group: anyio.abc.TaskGroup) -> None:
        group.start_soon(call(route, "big-1", BIG, statuses, "10.0.0.1"))
        await until(lambda: converter.order == ["big-1"])
        group.start_soon(call(route, "big-2", BIG, statuses, "10.0.0.2"))
        await until(lambda: route.waiting_for_worker() == 1)
        group.start_soon(call(route, "shadow", SMALL, statuses, "10.0.0.3"))
        await until(lambda: route.waiting_for_worker() == 2)
        converter.released.set()
        await until(lambda: len(statuses) == 3)

    run_with(script)

    assert converter.order == ["big-1", "shadow", "big-2"]
    assert statuses == {"big-1": 200, "big-2": 200, "shadow": 200}


def test_among_reviews_of_one_size_a_caller_with_fewer_in_goes_first() -> None:
    converter = HeldConverter()
    route = ConversionRoute(converter, closing=Closing())
    statuses: dict[str, int] = {}

    async def script(group: anyio.abc.TaskGroup) -> None:
        for index in range(3):
            group.start_soon(call(route, f"flood-{index}", SMALL, statuses, "10.0.0.9"))
            await until(reached_worker(route, converter, index + 1))
        group.start_soon(call(route, "apiserver", SMALL, statuses, "10.0.0.1"))
        await until(lambda: route.waiting_for_worker() == 3)
        converter.released.set()
        await until(lambda: len(statuses) == 4)

    run_with(script)

    assert converter.order == ["flood-0", "apiserver", "flood-1", "flood-2"]


def test_reviews_waiting_when_the_server_stops_get_503_and_the_one_converting_finishes() -> None:
    converter = HeldConverter()
    closing = Closing()
    route = ConversionRoute(converter, closing=closing)
    statuses: dict[str, int] = {}

    async def script(group: anyio.abc.TaskGroup) -> None:
        group.start_soon(call(route, "converting", SMALL, statuses, "10.0.0.1"))
        await until(lambda: converter.order == ["converting"])
        for index in range(4):
            group.start_soon(call(route, f"queued-{index}", SMALL, statuses, "10.0.0.2"))
        group.start_soon(call(route, "big", BIG, statuses, "10.0.0.3"))
        await until(lambda: route.waiting_for_worker() == 5)

        closing.close()
        await until(lambda: len(statuses) == 5)
        assert "converting" not in statuses
        converter.released.set()
        await until(lambda: len(statuses) == 6)
        late: dict[str, int] = {}
        await call(route, "late", SMALL, late, "10.0.0.4")()
        statuses.update(late)

    run_with(script)

    assert converter.order == ["converting"]
    assert statuses == {
        "converting": 200,
        **{f"queued-{index}": 503 for index in range(4)},
        "big": 503,
        "late": 503,
    }


def test_a_review_that_waits_past_its_bound_for_the_worker_is_told_to_retry() -> None:
    converter = HeldConverter()
    route = ConversionRoute(converter, closing=Closing(), wait_seconds=0.2)
    statuses: dict[str, int] = {}

    async def script(group: anyio.abc.TaskGroup) -> None:
        group.start_soon(call(route, "converting", SMALL, statuses, "10.0.0.1"))
        await until(lambda: converter.order == ["converting"])
        group.start_soon(call(route, "waiting", SMALL, statuses, "10.0.0.2"))
        await until(lambda: "waiting" in statuses)
        converter.released.set()
        await until(lambda: len(statuses) == 2)

    run_with(script)

    assert statuses == {"converting": 200, "waiting": 503}
    assert converter.order == ["converting"]

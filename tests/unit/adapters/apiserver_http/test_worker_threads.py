"""A blocking call on a worker thread: its answer and its error reach the caller, and a failed
call's frames (a request body among them) are freed at once, without the cyclic collector."""

from __future__ import annotations

import contextlib
import gc
import weakref
from collections.abc import Iterator

import anyio
import pytest

from brupop.adapters.apiserver_http.routes.worker_threads import on_worker_thread
from tests.support.polling import wait_until


class Body:
    """Stands for a request body a failed call held in its frame."""


class RefusedError(ValueError):
    pass


def refuse(body: Body) -> bytes:
    raise RefusedError(f"refused a body of {type(body).__name__}")


def answer(body: Body) -> bytes:
    return b"answered"


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_the_call_answers_on_a_worker_thread_and_its_answer_reaches_the_caller() -> None:
    async def run() -> bytes:
        return await on_worker_thread(answer, Body(), limiter=anyio.CapacityLimiter(1))

    assert anyio.run(run) == b"answered"


def test_what_the_call_raises_is_raised_to_the_caller_as_it_was() -> None:
    async def run() -> None:
        await on_worker_thread(refuse, Body(), limiter=anyio.CapacityLimiter(1))

    with pytest.raises(RefusedError, match="refused a body of Body"):
        anyio.run(run)


@pytest.mark.usefixtures("collector_off")
def test_a_failed_call_frees_its_body_by_reference_counting_alone() -> None:
    bodies: list[weakref.ref[Body]] = []

    async def run() -> None:
        limiter = anyio.CapacityLimiter(1)
        for _ in range(20):
            body = Body()
            bodies.append(weakref.ref(body))
            with contextlib.suppress(RefusedError):
                await on_worker_thread(refuse, body, limiter=limiter)
            del body

    anyio.run(run)

    # anyio's worker drops its reference to the last call just after handing the answer back;
    # nothing else may hold a body (the collector stays off while this waits).
    wait_until(lambda: all(ref() is None for ref in bodies), "every body freed")

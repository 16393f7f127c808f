"""Closing.race: a wait in its request's own task that the timeout, the shutdown or the client's
hang-up ends early."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest
from starlette.types import Message

from brupop.adapters.apiserver_http.routes.closing import ClientGoneError, Closing


class FakeConnection:
    """A connection that is lost when the test says so (the server's LostSignal)."""

    def __init__(self) -> None:
        self.callbacks: list[Callable[[], None]] = []

    def when_lost(self, callback: Callable[[], None]) -> Callable[[], None]:
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)

    def lose(self) -> None:
        for callback in list(self.callbacks):
            callback()


class ReceiveOn:
    """A receive carrying its connection, as CloseConnectionsMiddleware passes it on."""

    def __init__(self, connection: FakeConnection) -> None:
        self.connection = connection

    async def __call__(self) -> Message:
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}


async def finishes(value: str, seconds: float = 0.0) -> str:
    await asyncio.sleep(seconds)
    return value


async def test_the_work_that_finishes_in_time_wins_with_its_result() -> None:
    assert await Closing().race(finishes("done"), 5) == (True, "done")


async def test_the_timeout_ends_the_wait_and_cancels_the_work() -> None:
    cancelled = asyncio.Event()

    async def forever() -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    assert await Closing().race(forever(), 0.05) == (False, None)
    assert cancelled.is_set()


async def test_the_shutdown_from_another_thread_ends_a_wait_at_once() -> None:
    closing = Closing()
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, lambda: threading.Thread(target=closing.close).start())

    # The work and the race's own timeout last an hour: only the shutdown ends it in a minute.
    ended = await asyncio.wait_for(closing.race(finishes("late", 3600), 3600), 60)
    assert ended == (False, None)


async def test_a_wait_begun_after_the_shutdown_loses_without_running_its_work() -> None:
    closing = Closing()
    closing.close()
    ran: list[str] = []

    async def work() -> str:
        ran.append("ran")
        return "ran"

    assert await closing.race(work(), 30) == (False, None)
    assert ran == []


async def test_a_lost_connection_ends_the_wait_with_client_gone() -> None:
    connection = FakeConnection()
    asyncio.get_running_loop().call_later(0.05, connection.lose)

    with pytest.raises(ClientGoneError):
        await Closing().race(finishes("late", 30), 30, receive=ReceiveOn(connection))
    assert connection.callbacks == []  # the wait stopped listening


async def test_without_a_connection_a_disconnect_from_receive_ends_the_wait() -> None:
    working = asyncio.Event()

    async def work() -> str:
        working.set()
        return await finishes("late", 30)

    async def receive() -> Message:  # the client hangs up once the wait is under way
        await working.wait()
        return {"type": "http.disconnect"}

    with pytest.raises(ClientGoneError):
        await Closing().race(work(), 30, receive=receive)


async def test_an_error_of_the_work_reaches_the_caller_even_a_timeout_of_its_own() -> None:
    async def fails() -> str:
        raise TimeoutError("the work's own")

    with pytest.raises(TimeoutError, match="the work's own"):
        await Closing().race(fails(), 30)


async def test_a_shutdown_after_the_wait_ended_is_harmless() -> None:
    closing = Closing()
    assert await closing.race(finishes("done"), 5) == (True, "done")
    closing.close()
    await asyncio.sleep(0)  # whatever the close scheduled on this loop runs now
    assert closing.closed

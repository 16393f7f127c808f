"""CallerWaits: at most two long-polls per caller; a third ends the oldest, which answers as a
wait cut short does (None)."""

from __future__ import annotations

import asyncio

import pytest

from brupop.adapters.apiserver_http.routes.waits import CallerWaits


async def forever() -> str:
    await asyncio.Event().wait()
    return "changed"


def test_a_third_wait_of_one_caller_ends_the_oldest_only() -> None:
    async def scenario() -> tuple[list[bool], str | None, int]:
        waits = CallerWaits()
        first = asyncio.ensure_future(waits.wait("n1", forever))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(waits.wait("n1", forever))
        await asyncio.sleep(0)
        third = asyncio.ensure_future(waits.wait("n1", forever))
        other = asyncio.ensure_future(waits.wait("n2", forever))
        ended = await asyncio.wait_for(first, 5)
        done = [task.done() for task in (second, third, other)]
        held = waits.waiting("n1")
        for task in (second, third, other):
            task.cancel()
        await asyncio.gather(second, third, other, return_exceptions=True)
        return done, ended, held

    done, ended, held = asyncio.run(scenario())

    assert ended is None
    assert done == [False, False, False]
    assert held == 2


def test_a_wait_that_ends_by_itself_gives_its_result_and_its_place_back() -> None:
    async def scenario() -> tuple[str | None, int]:
        waits = CallerWaits()

        async def soon() -> str:
            return "changed"

        result = await waits.wait("n1", soon)
        return result, waits.waiting("n1")

    assert asyncio.run(scenario()) == ("changed", 0)


def test_the_awaitables_own_timeout_is_not_taken_for_an_ending() -> None:
    async def times_out() -> str:
        async with asyncio.timeout(0):
            await asyncio.Event().wait()
        return "never"

    with pytest.raises(TimeoutError):
        asyncio.run(CallerWaits().wait("n1", times_out))

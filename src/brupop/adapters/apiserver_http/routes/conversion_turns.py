"""Turns at a bounded resource, given in rank order: the conversion webhook's places and its worker.

`enter` gives a future that is done once the caller holds a place; the caller awaits it (raced
with the shutdown and a deadline, see `closing.Closing.race`) and calls `leave` once done. A
waiter whose future is cancelled has given up its turn; a future granted to a caller that gave
up at the same moment is the caller's to `leave` (see `granted`). Lower ranks go first, then the
earlier arrival. Runs in one event loop; no locks.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Iterator


class Turns:
    """`places` holders at once; the others wait, the best rank first."""

    def __init__(self, places: int) -> None:
        self._places = places
        self._holders = 0
        self._waiting: list[tuple[tuple[int, ...], int, asyncio.Future[None]]] = []
        self._arrivals: Iterator[int] = itertools.count()

    def waiting(self) -> int:
        """How many callers wait for a place (those who gave up are not counted)."""
        return sum(1 for _, _, future in self._waiting if not future.done())

    def free(self) -> bool:
        """Whether a caller entering now holds a place at once."""
        return self._holders < self._places

    def enter(self, rank: tuple[int, ...]) -> asyncio.Future[None]:
        """A future done once the caller holds a place (at once when one is free)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.free():
            self._holders += 1
            future.set_result(None)
        else:
            heapq.heappush(self._waiting, (rank, next(self._arrivals), future))
        return future

    def leave(self) -> None:
        """Give the place back: to the best waiter still waiting, if any."""
        while self._waiting:
            _, _, future = heapq.heappop(self._waiting)
            if not future.done():
                future.set_result(None)
                return
        self._holders -= 1


def granted(future: asyncio.Future[None]) -> bool:
    """Whether `future`, from `Turns.enter`, gave its caller a place (which it must leave)."""
    return future.done() and not future.cancelled()

"""At most a few long-polls per caller at once: a newer one ends the oldest early.

An agent holds one long-poll, two for a moment when it asks again before its last one ended. A
token that opens more would each hold a connection and a waiter for up to a minute; here the
`most + 1`-th wait of one caller ends its oldest at once, which answers as a wait cut short does.
Each wait runs in its request's task under a deadline that a newer wait brings to now (no task of
its own); one event loop serves every request, so no lock is needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import structlog

T = TypeVar("T")

MOST_WAITS_PER_CALLER = 2

log = structlog.get_logger(__name__)


class _Turn:
    """One wait: the deadline it is inside, which a newer wait of its caller brings to now."""

    __slots__ = ("deadline", "ended")

    def __init__(self) -> None:
        self.deadline: asyncio.Timeout | None = None
        self.ended = False

    def end(self) -> None:
        self.ended = True
        if self.deadline is not None and not self.deadline.expired():
            self.deadline.reschedule(asyncio.get_running_loop().time())


class CallerWaits:
    """The waits of each caller, oldest first."""

    def __init__(self, most: int = MOST_WAITS_PER_CALLER) -> None:
        self._most = most
        # A list, not a deque: it holds at most `most + 1` turns, and a deque is 600 bytes
        # while a short list is under 100 (one per waiting agent).
        self._turns: dict[str, list[_Turn]] = {}

    def waiting(self, caller: str) -> int:
        """How many waits `caller` holds now."""
        return len(self._turns.get(caller, ()))

    async def wait(self, caller: str, waiting: Callable[[], Awaitable[T]]) -> T | None:
        """What `waiting()` gives; None if a newer wait of `caller` ended this one first (the
        awaitable is made only once this runs: a wait that never ran leaves nothing behind)."""
        turn = _Turn()
        turns = self._turns.setdefault(caller, [])
        turns.append(turn)
        while len(turns) > self._most:
            turns.pop(0).end()
            log.debug("apiserver.wait_superseded", node=caller, most=self._most)
        try:
            async with asyncio.timeout(None) as deadline:
                turn.deadline = deadline
                return await waiting()
        except TimeoutError:
            if not turn.ended:
                raise  # the awaitable's own
            return None
        finally:
            turn.deadline = None
            if turn in turns:
                turns.remove(turn)
            if not turns and self._turns.get(caller) is turns:
                del self._turns[caller]

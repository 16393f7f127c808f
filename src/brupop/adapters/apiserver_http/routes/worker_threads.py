"""Blocking calls on anyio's worker threads, their errors raised on the event loop without a
reference cycle.

An exception that crosses `anyio.to_thread.run_sync` is carried by a future whose frame its
traceback holds: a cycle, freed only by the cyclic collector, that keeps every frame of the
failed call alive, its request body with it. The apiserver's youngest generation waits for
10,000 allocations, so a flood of refused requests (a 60 KB body nested past the parser's depth,
a bad token) piled up tens of MiB of these before a collection (docs/bench.md, section 5). Here
the thread hands the error back as a value and the caller raises it, holding no reference to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread

T = TypeVar("T")


class _Raised:
    """What a call on the worker thread raised, handed back as a value."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


def _outcome(function: Callable[..., T], args: tuple[Any, ...]) -> T | _Raised:
    try:
        return function(*args)
    except Exception as error:
        return _Raised(error)


async def on_worker_thread(function: Callable[..., T], *args: Any, limiter: Any) -> T:
    """`function(*args)` on a worker thread of `limiter`; what it raises is raised here."""
    outcome = await anyio.to_thread.run_sync(_outcome, function, args, limiter=limiter)
    if isinstance(outcome, _Raised):
        try:
            raise outcome.error
        finally:
            del outcome  # this frame, in the error's traceback, must not hold the error
    return outcome

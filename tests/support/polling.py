"""Waiting in a test for something another thread or process makes true: polled, bounded, and
failing with what was awaited; never a fixed sleep."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

DEFAULT_SECONDS = 20.0


def wait_until(
    condition: Callable[[], object],
    what: str = "the condition",
    *,
    seconds: float = DEFAULT_SECONDS,
    interval: float = 0.01,
) -> None:
    """Poll `condition` every `interval` seconds until it is true; AssertionError naming `what`
    once `seconds` have passed without it."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds:g} s: {what}"
        time.sleep(interval)


def first_answer(
    attempt: Callable[[], T],
    what: str = "an answer",
    *,
    seconds: float = DEFAULT_SECONDS,
    interval: float = 0.05,
) -> T:
    """`attempt()`'s result once it stops raising OSError (a server still starting to listen);
    AssertionError naming `what`, from the last OSError, once `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return attempt()
        except OSError as error:
            if time.monotonic() >= deadline:
                raise AssertionError(f"not within {seconds:g} s: {what} ({error})") from error
        time.sleep(interval)


async def eventually(
    condition: Callable[[], object],
    what: str = "the condition",
    *,
    seconds: float = DEFAULT_SECONDS,
    interval: float = 0.01,
) -> None:
    """`wait_until` for a coroutine: polls without blocking the event loop it runs on."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds:g} s: {what}"
        await asyncio.sleep(interval)

"""Waiting in a test for something another thread or process makes true: polled, bounded, and
failing with what was awaited; never a fixed sleep."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

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

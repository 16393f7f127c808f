"""How often an idle agent wakes to look for a stop: each look costs CPU on every node."""

from __future__ import annotations

import math
import threading
import time

from brupop.domain.host.agent_shadow import AgentShadow
from brupop.services.agent.long_poll import await_change
from brupop.services.agent.stop import StopFlag
from tests.fakes.clock import FakeClock

HELD_SECONDS = 3.0


class _CountedStop(StopFlag):
    """A stop flag that counts how often the agent looks at it."""

    def __init__(self) -> None:
        super().__init__()
        self.looks = 0

    @property
    def requested(self) -> bool:
        self.looks += 1
        return super().requested


class _HeldPoll:
    """A shadow store whose long poll is held by the apiserver for a few seconds."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def wait_for_change(self, _resource_version: str | None, _seconds: float) -> AgentShadow | None:
        self.released.wait(HELD_SECONDS)
        return None


def test_a_wait_of_ten_seconds_looks_for_a_stop_at_most_once_a_second() -> None:
    stop = _CountedStop()
    clock = FakeClock()

    stop.wait(clock, 10.0)

    assert sum(clock.sleeps) == 10.0
    assert len(clock.sleeps) <= 10


def test_a_held_long_poll_looks_for_a_stop_at_most_once_a_second() -> None:
    stop = _CountedStop()

    began = time.monotonic()
    answer = await_change(_HeldPoll(), "1", 30.0, stop)  # type: ignore[arg-type]
    held = time.monotonic() - began

    assert answer is None
    # At most one look a second of the time it was held (3 s, longer on a loaded machine),
    # plus the first and the last.
    assert stop.looks <= math.ceil(held) + 2, (stop.looks, held)

"""FakeClock: time that moves only when a test (or a sleep) moves it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.ports.clock import Clock


class FakeClock:
    """A Clock whose sleep() advances time instantly and records the wait."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)
        self._mono = 1000.0
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.advance(max(seconds, 0.0))

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        self._mono += seconds


_: Clock = FakeClock()

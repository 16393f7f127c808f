"""Equal decoded values held once: the mirrors hold thousands of shadows whose statuses are the
same (an idle fleet on one version), and each decoded status is about 1.5 KiB of objects."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

V = TypeVar("V", bound=Hashable)

SHARED_VALUES_LIMIT = 4096
"""Distinct values remembered; past it the memory starts again (what is shared stays shared)."""


class SharedValues:
    """Gives back an equal value already handed out, else remembers this one.

    Only for immutable values whose equality means interchangeable (frozen models). Safe from
    several threads: a race at worst hands out two equal copies."""

    def __init__(self, limit: int = SHARED_VALUES_LIMIT) -> None:
        self._limit = limit
        self._held: dict[Hashable, Hashable] = {}

    def share(self, value: V) -> V:
        """`value`, or an equal one handed out before."""
        held = self._held.get(value)
        if held is not None:
            return held  # type: ignore[return-value]  # equal to value, so of its type
        if len(self._held) >= self._limit:
            self._held.clear()
        self._held[value] = value
        return value

    def __len__(self) -> int:
        return len(self._held)

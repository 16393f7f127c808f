"""The rollout's concurrency: how many nodes may be outside Idle at once, and who holds a slot.

A node holds a slot while its spec or its status is anything but Idle: from the moment the
controller asks it to start until the agent reports it back in Idle. `MAX_CONCURRENT_UPDATE`
is a positive integer or `unlimited`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState

UNLIMITED = "unlimited"
ACCEPTED_FORMS = "a positive integer (e.g. 1, 3) or `unlimited`"


class ConcurrencyLimitError(ValueError):
    """A MAX_CONCURRENT_UPDATE value that is neither a positive integer nor `unlimited`."""


@dataclass(frozen=True)
class ConcurrencyLimit:
    """At most `maximum` nodes outside Idle; None means no limit."""

    maximum: int | None

    @classmethod
    def parse(cls, text: str) -> ConcurrencyLimit:
        """`unlimited` (any case) or a positive integer."""
        cleaned = text.strip().lower()
        if cleaned == UNLIMITED:
            return cls(None)
        if not cleaned.isdigit() or int(cleaned) < 1:
            raise ConcurrencyLimitError(f"{text!r} is not {ACCEPTED_FORMS}")
        return cls(int(cleaned))

    def free_slots(self, occupied: int, *, wanted: int) -> int:
        """How many of `wanted` nodes may start while `occupied` slots are held."""
        if self.maximum is None:
            return wanted
        return max(0, min(wanted, self.maximum - occupied))

    def __str__(self) -> str:
        return UNLIMITED if self.maximum is None else str(self.maximum)


def holds_slot(shadow: Shadow) -> bool:
    """The node counts against the limit: its spec or its status is outside Idle."""
    if shadow.spec.state is not UpdateState.IDLE:
        return True
    return shadow.status is not None and shadow.status.current_state is not UpdateState.IDLE


def slots_held(shadows: Iterable[Shadow]) -> int:
    """The number of nodes that count against the limit."""
    return sum(1 for shadow in shadows if holds_slot(shadow))

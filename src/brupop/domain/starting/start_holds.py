"""Start holds: why a node that is ready to start may not start yet, node by node.

The fleet-wide conditions (pause, halt, alert gate, window, the global limit) hold every node
alike. A start rule instead looks at one candidate (its Node, its pods, the version it is
offered) and may hold it with a reason of its own: a budget of its zone, a version pin, an
autoscaler removing it. Candidates are tried in start order; the first rule that holds one
names its REASON; one that no rule holds starts, and each rule hears of it (`started`), so a
budget or the capacity check counts it before the next candidate is tried.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple, Protocol

from brupop.domain.cluster.objects import Node
from brupop.domain.reason import Reason


class StartHold(NamedTuple):
    """Why one candidate waits: a reason code and the sentence `brupop status` shows
    (e.g. `pinned to 1.20.1`, `zone us-east-1a at 1/1`), and when the hold lifts by itself
    (a release age, a node's age), if it does."""

    reason: Reason
    detail: str
    until: datetime | None = None


class StartCandidate(NamedTuple):
    """A node ready to start: its shadow, its Node (None when the mirror lacks it) and the
    version it would update to."""

    shadow: str
    node_name: str
    target_version: str
    node: Node | None


class StartRule(Protocol):
    """One rule a candidate must pass before it starts."""

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        """Why `candidate` may not start now; None when this rule lets it."""
        ...

    def started(self, candidate: StartCandidate) -> None:
        """`candidate` was chosen to start in this pass: count it against later ones."""
        ...


class StartChoice(NamedTuple):
    """The candidates chosen to start (in order) and the ones held, with why."""

    starts: tuple[StartCandidate, ...]
    holds: dict[str, StartHold]


def choose_starts(
    candidates: list[StartCandidate], free: int, rules: tuple[StartRule, ...], now: datetime
) -> StartChoice:
    """Up to `free` candidates, in the order given, that no rule holds. Candidates past the
    last free slot are not tried (their REASON stays the global limit)."""
    starts: list[StartCandidate] = []
    holds: dict[str, StartHold] = {}
    for candidate in candidates:
        if len(starts) >= free:
            break
        hold = next((h for rule in rules if (h := rule.hold(candidate, now)) is not None), None)
        if hold is not None:
            holds[candidate.shadow] = hold
            continue
        starts.append(candidate)
        for rule in rules:
            rule.started(candidate)
    return StartChoice(tuple(starts), holds)

"""The capacity check as a start rule: a node starts only when the pods its drain would evict
fit on the other schedulable nodes (`capacity.check_room_in`, over one FleetCensus).

The nodes already leaving count against it: those updating when the pass began (`leaving`,
the ones the controller has asked to stage or to drain and reboot) and those started earlier
in the same pass (`started`). Their pods still in the census need room too, and they offer
none. A node with nothing to evict always passes.

A check that finds room costs about 2 ms at 10,000 nodes, and the node then starts (the
capacity rule comes last), so a pass makes at most as many of them as it has free slots. One
that finds no room scans every other node for every unplaced pod, about 30 ms at 10,000 nodes;
so verdicts are kept (`RoomVerdicts`) for as long as the census and the leaving nodes stay the
same, and after ROOM_MISSES_PER_PASS new checks that found no room a pass checks no further:
the candidates left wait, with a REASON saying they were not checked yet, for a later pass
(which starts from the verdicts kept).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from brupop.domain.capacity.fleet_census import FleetCensus
from brupop.domain.capacity.room import RoomVerdict, check_room_in
from brupop.domain.reason import Reason
from brupop.domain.starting.start_holds import StartCandidate, StartHold

ROOM_MISSES_PER_PASS = 4


class RoomVerdicts:
    """Verdicts by node, valid for one census and one set of leaving nodes."""

    def __init__(self) -> None:
        self._census: FleetCensus | None = None
        self._leaving: frozenset[str] = frozenset()
        self._verdicts: dict[str, RoomVerdict] = {}

    def get(self, census: FleetCensus, leaving: frozenset[str], node: str) -> RoomVerdict | None:
        """The verdict kept for `node` under this census and these leaving nodes, if any."""
        if census is not self._census or leaving != self._leaving:
            return None
        return self._verdicts.get(node)

    def keep(
        self, census: FleetCensus, leaving: frozenset[str], node: str, verdict: RoomVerdict
    ) -> None:
        """Keep `verdict`; verdicts of another census or other leaving nodes are dropped."""
        if census is not self._census or leaving != self._leaving:
            self._census = census
            self._leaving = leaving
            self._verdicts = {}
        self._verdicts[node] = verdict


class CapacityRule:
    """StartRule: hold a candidate whose evicted pods do not fit elsewhere (single pass)."""

    def __init__(
        self,
        census: FleetCensus,
        leaving: Iterable[str],
        verdicts: RoomVerdicts,
        *,
        misses: int = ROOM_MISSES_PER_PASS,
    ) -> None:
        self._census = census
        self._verdicts = verdicts
        self._leaving = frozenset(leaving)
        self._misses_left = misses
        self._misses = misses

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        """NO_ROOM with the verdict's sentence when the candidate's pods do not fit."""
        census, node = self._census, candidate.node_name
        evicted = census.evicted(node)
        if not evicted:
            return None
        leaving = self._leaving - {node}
        verdict = self._verdicts.get(census, leaving, node)
        if verdict is None:
            if self._misses_left <= 0:
                return StartHold(Reason.NO_ROOM, f"room not checked yet: {self._misses_sentence()}")
            moving = evicted + tuple(
                pod for name in sorted(leaving) for pod in census.evicted(name)
            )
            verdict = check_room_in(moving, census.nodes, census.room, node, also_leaving=leaving)
            self._verdicts.keep(census, leaving, node, verdict)
            self._misses_left -= 0 if verdict.fits else 1
        if verdict.fits:
            return None
        return StartHold(Reason.NO_ROOM, _sentence(verdict, len(leaving)))

    def started(self, candidate: StartCandidate) -> None:
        """The candidate starts: its node offers no room now, and its pods need some."""
        self._leaving = self._leaving | {candidate.node_name}

    def _misses_sentence(self) -> str:
        nodes = "1 node" if self._misses == 1 else f"{self._misses} nodes"
        return f"{nodes} before it found none in this pass"


class CensusMissing:
    """StartRule: hold every candidate when the cluster could not be listed (no guessing)."""

    def __init__(self, error: str) -> None:
        self._detail = f"room unknown: the cluster's pods could not be listed ({error})"

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        """NO_ROOM for everyone, naming the listing's failure."""
        return StartHold(Reason.NO_ROOM, self._detail)

    def started(self, candidate: StartCandidate) -> None:
        """Nothing starts while it holds."""


def _sentence(verdict: RoomVerdict, others: int) -> str:
    """The verdict's sentence, saying when the pods of nodes already leaving were counted."""
    if others == 0:
        return verdict.reason
    nodes = "1 other node" if others == 1 else f"{others} other nodes"
    return f"{verdict.reason} with {nodes} updating"

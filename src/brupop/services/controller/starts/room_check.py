"""RoomCheck: the cluster census a pass reads, and the capacity check's start rule over it.

The census (every Node, pod and PodDisruptionBudget, `PodCensus`) is asked for only by a pass
that can start a node (the book calls the chooser only then) and only when something reads it:
the policy's `capacityCheck`, or the cheapest-first order when no other cost source is given.
`PodCensus` itself lists the cluster at most once per period, so a pass with nothing to start
lists nothing. When the listing fails and no recent census is left, the capacity check holds
every start (it does not guess) and the order falls back to the book's.

The nodes counted as leaving are those the controller has asked to stage the update or to
drain and reboot: the pods still on them need room elsewhere, and they offer none. A node
back from its reboot (MonitoringUpdate) serves again and is counted as any other.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

import structlog

from brupop.domain.capacity.capacity_rule import CapacityRule, CensusMissing, RoomVerdicts
from brupop.domain.capacity.fleet_census import FleetCensus
from brupop.domain.policy.effective_policy import EffectivePolicy
from brupop.domain.starting.start_holds import StartRule
from brupop.domain.states import UpdateState
from brupop.ports.errors import PortError
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.mirrors.pod_census import PodCensus

log = structlog.get_logger(__name__)

ERROR_MAX_LENGTH = 200  # of a listing error repeated in REASON
_LEAVING_STATES = frozenset(
    {UpdateState.STAGED_AND_PERFORMED_UPDATE, UpdateState.REBOOTED_INTO_UPDATE}
)


class RoomKey(NamedTuple):
    """What a pass's capacity rule decides from: the census taken (a census is replaced, never
    changed, so it is compared by identity) and the nodes leaving."""

    census: FleetCensus | str | None
    leaving: tuple[str, ...]


class RoomCheck:
    """The census of the current pass (taken on demand) and the capacity rule it gives."""

    def __init__(self, fleet: FleetMirror, census: PodCensus) -> None:
        self._fleet = fleet
        self._source = census
        self._verdicts = RoomVerdicts()
        self._taken: FleetCensus | str | None = None
        self._failing = False  # the census failed on the last pass that took it

    def take(
        self, policy: EffectivePolicy, now: datetime, *, for_order: bool
    ) -> FleetCensus | None:
        """The census for this pass when the capacity check or the order (`for_order`) reads
        it; None when neither does, or it could not be listed."""
        self._taken = None
        if not (policy.scheduling.capacity_check or for_order):
            return None
        try:
            self._taken = self._source.snapshot(now)
        except PortError as error:
            if not self._failing:  # once per failure streak; REASON says it on every pass
                log.warning("room_check.census_failed", reason=str(error)[:ERROR_MAX_LENGTH])
            self._failing = True
            self._taken = str(error)[:ERROR_MAX_LENGTH]
            return None
        if self._failing:
            log.info("room_check.census_recovered")
        self._failing = False
        return self._taken

    def rules(self, policy: EffectivePolicy, holding: Iterable[str]) -> list[StartRule]:
        """The capacity rule of this pass (none when the policy's check is off); `holding`: the
        shadows holding a slot. Call `take` first."""
        taken = self._taken
        if not policy.scheduling.capacity_check:
            return []
        if taken is None or isinstance(taken, str):
            return [CensusMissing(taken or "no census taken")]
        return [CapacityRule(taken, self._leaving(holding), self._verdicts)]

    def key(self, holding: Iterable[str]) -> RoomKey:
        """What this pass's capacity rule decides from (see `RoomKey`)."""
        return RoomKey(census=self._taken, leaving=tuple(sorted(self._leaving(holding))))

    def _leaving(self, holding: Iterable[str]) -> list[str]:
        book = self._fleet.book
        return [
            facts.node_name
            for name in holding
            if (facts := book.facts(name)) is not None and facts.spec_state in _LEAVING_STATES
        ]

"""PodCensus: list every Node, pod and PodDisruptionBudget of the cluster, at most once every
`census_seconds`, and only when a start decision asks for it.

Listing all pods is the heaviest read the controller makes (it pages by 500), so it is not done
every pass: a census is reused until it is `census_seconds` old. A failed listing keeps the
previous census while it is younger than STALE_AFTER censuses' worth of time; after that (or
with no census yet) the PortError reaches the caller, which must then hold starts that need
the census rather than guess.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog

from brupop.domain.capacity.fleet_census import FleetCensus
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import PortError

log = structlog.get_logger(__name__)

DEFAULT_CENSUS_SECONDS = 30.0
STALE_AFTER = 4  # a census older than this many periods is not used after a failed refresh


class PodCensus:
    """The fleet's census, refreshed lazily."""

    def __init__(
        self,
        pods: PodRepository,
        nodes: NodeRepository,
        census_seconds: float = DEFAULT_CENSUS_SECONDS,
    ) -> None:
        if census_seconds <= 0:
            raise ValueError("census_seconds must be positive")
        self._pods = pods
        self._nodes = nodes
        self._period = timedelta(seconds=census_seconds)
        self._census: FleetCensus | None = None

    def snapshot(self, now: datetime) -> FleetCensus:
        """The census, taken anew when there is none or it is `census_seconds` old (or from
        the future: the clock went back). Raises PortError when the cluster cannot be listed
        and no usable census is left."""
        census = self._census
        if census is not None and census.taken_at <= now < census.taken_at + self._period:
            return census
        try:
            census = self._take(now)
        except PortError as error:
            if census is None or not census.taken_at <= now < census.taken_at + (
                self._period * STALE_AFTER
            ):
                raise
            log.warning("pod_census.refresh_failed", reason=str(error), kept=str(census.taken_at))
            return census
        self._census = census
        return census

    def _take(self, now: datetime) -> FleetCensus:
        nodes = self._nodes.list().items
        pods = self._pods.list_all()
        budgets = self._pods.list_all_disruption_budgets()
        return FleetCensus.of(now, nodes, pods, budgets)

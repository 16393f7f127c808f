"""MirrorCatchUp: how the controller's mirrors (shadows, Nodes, the policy) keep up with the
cluster between passes: what the informers follow, a first fill, the catch-up before each
tick, and the periodic resync (done by the following informers on their own threads, between
two watches, so that a resync of 10,000 shadows and Nodes never holds up a tick; by the tick
itself only when nothing follows, or when asked). Kept apart from the loop that calls it.
"""

from __future__ import annotations

from typing import Any

import structlog

from brupop.ports.clock import Clock
from brupop.ports.errors import PortError
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.policy.policy_follower import PolicyFollower
from brupop.services.runtime.informer import Informer


class MirrorCatchUp:
    """Brings the fleet mirror and the followed policy up to date before a tick's passes."""

    def __init__(
        self,
        fleet: FleetMirror,
        follower: PolicyFollower,
        config: ControllerConfig,
        clock: Clock,
        log: structlog.typing.FilteringBoundLogger,
    ) -> None:
        self.fleet = fleet
        self._follower = follower
        self._config = config
        self._clock = clock
        self._log = log
        self._followed = False  # watch threads apply the events (`run`), else the tick polls
        self._term: int | None = None  # the Lease term the mirror was last listed for
        self._last_resync: float | None = None
        self._resync_asked = False

    def informers(self) -> dict[str, Informer[Any]]:
        """What the change watch follows."""
        return {
            "shadows": self.fleet.shadow_informer,
            "nodes": self.fleet.node_informer,
            "policies": self._follower.informer,
        }

    def start_following(self) -> dict[str, Informer[Any]]:
        """From now on watch threads apply the events: a first list, so that they start from
        it rather than list again; what they are to follow."""
        self._followed = True
        for informer in self.informers().values():
            try:
                informer.relist()
            except PortError as error:
                self._log.debug("mirror.fill_failed", kind=informer.kind, error=str(error))
        return self.informers()

    def request_resync(self) -> None:
        """Make the next catch-up list everything again and repair the mirror from that list
        (what the periodic resync does every `resync_seconds`)."""
        self._last_resync = None
        self._resync_asked = True

    def catch_up(self, term: int | None) -> None:
        """Catch up before a tick; `term`: the Lease term led (None: not leading). A term
        newly gained lists the shadows again."""
        self._catch_up(gained_leadership=term is not None and term != self._term)
        self._term = term

    def _catch_up(self, *, gained_leadership: bool) -> None:
        now = self._clock.monotonic()
        last = self._last_resync
        followed = self._followed
        resync = last is None or now - last >= self._config.resync_seconds
        resync = self._resync_asked or (resync and not followed)  # else the informers resync
        by_list = self._config.catch_up_by_list and not followed
        self.fleet.catch_up(
            followed=followed, resync=resync, gained_leadership=gained_leadership, by_list=by_list
        )
        self._follower.catch_up(followed=followed, resync=resync or by_list)
        if resync:
            self._last_resync = now
            self._resync_asked = False

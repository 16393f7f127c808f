"""StatusReadout: what the controller's HTTP surface reads of one replica.

The nodes' rows, the offered versions, the limit and the scheduling facts as of the last
pass, the work done so far, and whether the loop is ready and healthy. Kept apart from the
loop, which only tells it when a tick completed.
"""

from __future__ import annotations

from dataclasses import replace

from brupop.domain.reporting.waiting_reason import NodeReport, clock_hold, report
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.starting.scheduling_facts import SchedulingFacts
from brupop.domain.starting.version_gate import VersionStanding
from brupop.ports.clock import Clock
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.node_reasons import NodeReasons
from brupop.services.controller.pass_publishing import PassPublisher
from brupop.services.controller.policy.policy_rules import PolicyRules


class StatusReadout:
    """Answers the status document and the probes from what the passes left."""

    def __init__(
        self,
        *,
        fleet: FleetMirror,
        rules: PolicyRules,
        reasons: NodeReasons,
        published: PassPublisher,
        config: ControllerConfig,
        clock: Clock,
    ) -> None:
        self._fleet = fleet
        self._rules = rules
        self._reasons = reasons
        self._published = published
        self._config = config
        self._clock = clock
        self._last_tick: float | None = None
        self._started_mono = clock.monotonic()

    def ticked(self) -> None:
        """A tick completed now."""
        self._last_tick = self._clock.monotonic()

    def reports(self) -> list[NodeReport]:
        """Every node's row, from the shadows and what the last pass knew (built on demand)."""
        view = self._published.view
        if view is None:
            return []
        book = self._fleet.book
        return report([s for n in book.names() if (s := book.shadow(n)) is not None], view)

    def versions(self) -> list[VersionStanding]:
        """Each offered version's first-seen time, eligibility and hold, as of the last pass
        (empty without a policy object: nothing is tracked then)."""
        view = self._published.view
        if view is None:
            return []
        return self._rules.version_standings(self._fleet.book, view.now)

    def limit(self) -> ConcurrencyLimit:
        """The global limit the last pass applied: the policy's `maxConcurrent` when set, else
        `MAX_CONCURRENT_UPDATE` (also before the first pass)."""
        view = self._published.view
        return view.rollout_rules.limit if view is not None else self._config.rollout_rules.limit

    def scheduling(self) -> SchedulingFacts:
        """The budgets in use, the expected update time and the clock's hold, as of the last
        pass (the hold's sentence is made here: a closed window's next opening is a search)."""
        view = self._published.view
        facts = self._published.scheduling
        return replace(facts, hold=clock_hold(view)) if view is not None else facts

    def work_done(self) -> tuple[int, int]:
        """(shadows decided, nodes explained) so far: what a pass with nothing new must not
        add to, beyond the nodes in a slot."""
        return self._fleet.book.decided, self._reasons.explained

    def is_ready(self, *, watch_failing: bool) -> bool:
        """At least one pass has completed, and no change watch keeps failing."""
        return self._last_tick is not None and not watch_failing

    def is_healthy(self) -> bool:
        """The loop has completed a tick recently (or is still starting)."""
        limit = max(60.0, 10 * self._config.tick_seconds)
        last = self._last_tick if self._last_tick is not None else self._started_mono
        return self._clock.monotonic() - last < limit

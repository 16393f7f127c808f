"""PassPublisher: what a controller pass shows once it has decided and written.

From the pass's facts it builds the RolloutView, refreshes the REASON of the nodes whose
reason may have changed, and sets the metrics, the scheduling facts and the policy's status;
the last view and facts stay for the HTTP surface. Kept apart from deciding and writing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from brupop.domain.cluster.drain_progress import DrainProgress
from brupop.domain.policy.effective_policy import EffectivePolicy, PolicySource
from brupop.domain.reporting.variant_offers import VariantOffers
from brupop.domain.reporting.waiting_reason import RolloutView
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.starting.scheduling_facts import SchedulingFacts
from brupop.domain.starting.start_holds import StartHold
from brupop.domain.starting.update_durations import UpdateDurations
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.node_reasons import NodeReasons
from brupop.services.controller.policy.policy_rules import PolicyRules
from brupop.services.controller.safety.rollout_safety import SafetyPass
from brupop.services.controller.starts.start_rules import StartRules
from brupop.services.controller.starts.start_timing import ScheduleGate
from brupop.services.controller.writing.recalled_failures import RecalledFailures
from brupop.services.controller.writing.rollout_writer import WriteOutcome


@dataclass(slots=True)  # not frozen: built every pass, and a frozen one costs ~3x to build
class PassFacts:
    """What one pass decided and wrote, as publishing reads it (handed over, not kept)."""

    now: datetime
    leading: bool
    in_force: EffectivePolicy
    limit: ConcurrencyLimit
    clock_says: ScheduleGate
    paused: bool
    safety: SafetyPass
    drains: dict[str, DrainProgress]
    history: UpdateDurations
    outcome: WriteOutcome
    touched: set[str]
    """Shadows whose facts changed in this pass."""


class PassPublisher:
    """Publishes each pass, and keeps the last one's view and scheduling facts."""

    def __init__(
        self,
        *,
        fleet: FleetMirror,
        config: ControllerConfig,
        reasons: NodeReasons,
        rules: PolicyRules,
        starts: StartRules,
        failures: RecalledFailures,
        metrics: RolloutMetrics,
    ) -> None:
        self._fleet = fleet
        self._config = config
        self._reasons = reasons
        self._rules = rules
        self._starts = starts
        self._failures = failures
        self._metrics = metrics
        self.view: RolloutView | None = None
        self.scheduling = SchedulingFacts()
        self._started_before: frozenset[str] = frozenset()
        self._holds_before: Mapping[str, StartHold] = {}
        self._variants = VariantOffers()
        self._behind: dict[str, str] = {}

    def publish(self, facts: PassFacts) -> None:
        """The view, the reasons, the metrics, the scheduling facts and the policy's status."""
        book = self._fleet.book
        view = self._view_of(facts)
        self._refresh(view, facts.touched | self._variants_moved(view, facts.touched))
        holding = book.holders() | view.started
        budgets = self._starts.usage(facts.in_force, holding)
        self._metrics.set_budgets_in_use({(u.budget, u.group): u.in_use for u in budgets})
        self.scheduling = SchedulingFacts(
            budgets,
            facts.history.expected_seconds,
            len(facts.history.seconds),
            finish_by=facts.in_force.source is not PolicySource.ENVIRONMENT
            and facts.in_force.scheduling.finish_by,
        )
        self._rules.publish(
            book,
            len(holding),
            facts.paused,
            facts.safety,
            facts.now,
            leading=facts.leading,
            budgets=budgets,
        )

    def _view_of(self, facts: PassFacts) -> RolloutView:
        """What the pass knows beyond the shadows themselves."""
        rules = self._config.rollout_rules
        if facts.limit != rules.limit:
            rules = replace(rules, limit=facts.limit)
        safety, now = facts.safety, facts.now
        return RolloutView(
            now=now,
            rollout_rules=rules,
            window=self._config.window,
            window_open=facts.clock_says.window_open,
            schedule_hold=facts.clock_says.hold,
            started=frozenset(facts.outcome.started),
            drains=facts.drains,
            timeouts=dict(self._failures.timeouts),
            paused=facts.paused,
            held_back=self._fleet.book.held_back(),
            halted=safety.halt.message if safety.halt.halted else None,
            blocked=safety.alerts.reason,
            soak=safety.soak.message(now) if safety.soak is not None and safety.soaking else None,
            canaries=safety.canaries or frozenset(),
            gate_holds=safety.gate_holds(),
            gate_failures=dict(self._failures.gate_failures),
            start_holds=self._starts.holds,
            quarantined=self._fleet.book.quarantined(),
            variants_behind=self._variants_behind(facts),
        )

    def _variants_behind(self, facts: PassFacts) -> dict[str, str]:
        """The variants offered nothing past the grace period (the record redrawn only when
        some shadow changed)."""
        book = self._fleet.book
        if facts.touched:  # the book keeps the versions by variant: no scan of the fleet
            self._variants = self._variants.after(book.variant_versions.newest(), facts.now)
        grace = timedelta(seconds=self._config.variant_offer_grace_seconds)
        return self._variants.left_behind(facts.now, grace)

    def _variants_moved(self, view: RolloutView, touched: set[str]) -> set[str]:
        """The nodes of the variants that fell behind or caught up in this pass."""
        behind = dict(view.variants_behind)
        moved = {
            v for v in behind.keys() | self._behind.keys() if behind.get(v) != self._behind.get(v)
        }
        self._behind = behind
        if not moved:
            return set()
        book = self._fleet.book
        return {
            name
            for name in book.names()
            if (s := book.shadow(name)) and s.status and s.status.variant in moved
        } - touched

    def _refresh(self, view: RolloutView, touched: set[str]) -> None:
        """Metrics, and the reasons of the nodes whose reason may have changed."""
        book = self._fleet.book
        holders = book.holders()
        held = len(holders | view.started)
        names = touched | holders | view.started | self._started_before
        holds, before = view.start_holds, self._holds_before
        # A held node's REASON names its hold: refresh it when the hold appears, changes or goes.
        if holds is not before:  # the same choice as the last pass keeps its holds' object
            names.update(n for n in holds.keys() | before.keys() if holds.get(n) != before.get(n))
        self._holds_before = holds
        if self._reasons.fleet_changed(view, held):
            # A halt outranks a Node's own pause: the held-back nodes' reasons change with it.
            names.update(book.ready_names())
            names.update(view.held_back)
        self._reasons.refresh(sorted(names), book.shadow, view, held)
        self._started_before = view.started
        self.view = view
        self._metrics.set_hosts(Counter(book.states), Counter(book.versions))
        self._metrics.set_waiting(self._reasons.waiting())

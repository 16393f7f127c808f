"""RolloutPass: one pass of the controller, deciding and (as leader) writing the rollout.

It absorbs what changed into the book, assesses the policy's rules, plans the starts and steps
and has LeaderWrites write them (with the orphans' cleanup, the prestage asks and the
autoscaler annotations), then hands its facts to the publisher. The loop (leadership, catching
up, waiting) is ControllerService's.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from brupop.domain.cluster.drain_progress import DrainProgress
from brupop.domain.policy.effective_policy import EffectivePolicy
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutPlan
from brupop.domain.starting.update_durations import UpdateDurations
from brupop.domain.windows.maintenance_window import WindowGate
from brupop.ports.clock import Clock
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.leader_writes import LeaderWrites, shadows_named
from brupop.services.controller.mirrors.drain_watch import observe_drains
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.pass_publishing import PassFacts, PassPublisher
from brupop.services.controller.phase_timing import PhaseTimer
from brupop.services.controller.policy.policy_rules import PolicyRules
from brupop.services.controller.safety.rollout_safety import SafetyPass
from brupop.services.controller.starts.prestage_keeper import FleetStop
from brupop.services.controller.starts.start_rules import StartRules
from brupop.services.controller.starts.start_timing import ScheduleGate
from brupop.services.controller.writing.rollout_writer import WriteOutcome


class RolloutPass:
    """Decides one pass over the fleet mirror, and (as leader) has it written."""

    def __init__(
        self,
        *,
        fleet: FleetMirror,
        rules: PolicyRules,
        starts: StartRules,
        writes: LeaderWrites,
        publisher: PassPublisher,
        pods: PodRepository,
        clock: Clock,
        config: ControllerConfig,
        metrics: RolloutMetrics,
        log: structlog.typing.FilteringBoundLogger,
    ) -> None:
        self._fleet = fleet
        self._rules = rules
        self._starts = starts
        self._writes = writes
        self._publisher = publisher
        self._pods = pods
        self._clock = clock
        self._config = config
        self._metrics = metrics
        self._log = log
        self._phases = PhaseTimer(metrics)
        self._gate = WindowGate(clock.now())

    def run(self, leading: bool, *, hold_starts: bool = False) -> bool:
        """Decide and write once (starting nobody when `hold_starts`); True when a write met a
        conflict and a new pass is due."""
        now = self._clock.now()
        if self._writes.lag_behind(leading):
            self._log.debug("shadows.mirror_lags_behind_own_writes")
            return False
        fleet, writes = self._fleet, self._writes
        touched = fleet.absorb(now)
        writes.tell_quarantined(leading)
        paused, safety = self._rules.assess(now, fleet.book, touched, leading=leading)
        in_force = self._rules.follower.policy
        touched |= self._follow(in_force, now, leading=leading)
        # A follower writes nothing: it lists no pods for drains and takes no pod census to
        # choose whom to start (what a pass costs kube-apiserver, twice over with two replicas).
        drains = self._drains() if leading else {}
        limit = self._starts.limit(in_force, self._config.rollout_rules.limit)
        self._metrics.set_concurrency_limit(limit.maximum)
        clock_says = self._clock_says(now)
        held = paused or hold_starts or not leading
        plan = self._plan(now, in_force, limit, clock_says, paused=held, safety=safety)
        stopped = paused or safety.halt.halted
        if leading:
            plan = writes.withdraw_prestage(plan, in_force, now, stopped=stopped)
        history = self._observe_phases(touched, drains, now, leading=leading)
        outcome = writes.write(plan, safety, now) if leading else WriteOutcome()
        touched |= writes.absorb(outcome.stored, outcome.conflicted, now)
        if leading and not outcome.stopped_leading:
            touched |= self._keep_prestage(in_force, clock_says, now, stopped)
        writes.guard_nodes(leading and not outcome.stopped_leading, outcome.started)
        writes.forget_old_failures(now)
        facts = PassFacts(
            now=now,
            leading=leading,
            in_force=in_force,
            limit=limit,
            clock_says=clock_says,
            paused=paused,
            safety=safety,
            drains=drains,
            history=history,
            outcome=outcome,
            touched=touched,
        )
        self._publisher.publish(facts)
        return outcome.conflicts > 0 and not outcome.stopped_leading

    def _follow(self, in_force: EffectivePolicy, now: datetime, *, leading: bool) -> set[str]:
        """Follow the labels the budgets group by, and (as leader) clean up the orphans; the
        names of the shadows this touched."""
        fleet = self._fleet
        touched: set[str] = set()
        if fleet.follow_labels(frozenset(b.group_by for b in in_force.scheduling.budgets)):
            touched |= fleet.absorb(now)
        if leading and fleet.orphans:
            touched |= self._writes.sweep(now)
        return touched

    def _drains(self) -> dict[str, DrainProgress]:
        """Drain progress of every node being drained."""
        holders = shadows_named(self._fleet, self._fleet.book.holders())
        return observe_drains(holders, self._fleet.nodes.get, self._pods, self._log)

    def _clock_says(self, now: datetime) -> ScheduleGate:
        """What the environment's window and the policy's clock rules allow now."""
        window = self._config.window
        self._gate = self._gate.advance(window, now, any_ready=self._fleet.book.ready_count > 0)
        return self._rules.schedule(window, self._gate.is_open, now)

    def _plan(
        self,
        now: datetime,
        in_force: EffectivePolicy,
        limit: ConcurrencyLimit,
        clock_says: ScheduleGate,
        *,
        paused: bool,
        safety: SafetyPass,
    ) -> RolloutPlan:
        """The book's plan under every rule that holds starts."""
        return self._fleet.book.plan(
            now,
            may_start=clock_says.may_start and not paused and safety.may_start,
            withheld=safety.withheld(),
            only=safety.canaries if safety.soaking else None,
            limit=limit,
            choose=self._starts.chooser(in_force, now),
        )

    def _observe_phases(
        self, touched: set[str], drains: dict[str, DrainProgress], now: datetime, *, leading: bool
    ) -> UpdateDurations:
        """Time the update phases of the nodes that moved; the durations learned so far."""
        shadows = shadows_named(self._fleet, touched | self._fleet.book.holders())
        self._phases.observe(shadows, drains, now)
        self._rules.measured(self._phases.take_completed(), leading=leading)
        history = self._rules.timing.history
        self._metrics.set_expected_update(history.expected_seconds)
        return history

    def _keep_prestage(
        self, in_force: EffectivePolicy, clock_says: ScheduleGate, now: datetime, stopped: bool
    ) -> set[str]:
        """Ask Idle nodes to prepare ahead, or stop asking (leader only); the shadows touched."""
        hold = clock_says.hold
        stop = FleetStop(
            stopped=stopped,
            window_open=clock_says.may_start,
            opens_at=hold.until if hold is not None and clock_says.window_open else None,
        )
        versions = self._rules.versions.gate(in_force.scheduling.version)
        return self._writes.keep_prestage(in_force, stop, versions, now)

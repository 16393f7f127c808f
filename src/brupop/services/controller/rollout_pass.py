"""RolloutPass: one pass of the controller, deciding and (as leader) writing the rollout.

It absorbs what changed into the book, assesses the policy's rules, cleans up orphans, plans
the starts and steps, writes them, keeps the autoscaler off the nodes in a slot, and hands its
facts to the publisher. The loop (leadership, catching up, waiting) is ControllerService's;
the parts a pass shares with the loop come in one PassParts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog

from brupop.domain.cluster.drain_progress import DrainProgress
from brupop.domain.policy.effective_policy import ENVIRONMENT_POLICY, EffectivePolicy
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutPlan
from brupop.domain.shadow import Shadow
from brupop.domain.starting.update_durations import UpdateDurations
from brupop.domain.windows.maintenance_window import WindowGate
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.mirrors.drain_watch import observe_drains
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.pass_publishing import PassFacts, PassPublisher
from brupop.services.controller.phase_timing import PhaseTimer
from brupop.services.controller.policy.policy_rules import PolicyRules
from brupop.services.controller.replica import ControllerMetrics, ControllerPorts
from brupop.services.controller.runtime.leader_election import LeaderElector
from brupop.services.controller.safety.gate_settling import settle_gates
from brupop.services.controller.safety.rollout_safety import SafetyPass
from brupop.services.controller.starts.autoscaler_guard import AutoscalerGuard
from brupop.services.controller.starts.prestage_keeper import FleetStop, PrestageKeeper
from brupop.services.controller.starts.start_rules import StartRules
from brupop.services.controller.starts.start_timing import ScheduleGate
from brupop.services.controller.writing.opt_out_cleanup import OptOutCleanup
from brupop.services.controller.writing.recalled_failures import RecalledFailures
from brupop.services.controller.writing.rollout_writer import RolloutWriter, WriteOutcome
from brupop.services.controller.writing.write_journal import WriteJournal


@dataclass(frozen=True)
class PassParts:
    """The replica's pieces a pass works with; its loop and its readout share them."""

    elector: LeaderElector
    fleet: FleetMirror
    rules: PolicyRules
    starts: StartRules
    journal: WriteJournal
    failures: RecalledFailures
    publisher: PassPublisher


class RolloutPass:
    """Decides and writes one pass over the fleet mirror."""

    def __init__(
        self,
        ports: ControllerPorts,
        config: ControllerConfig,
        metrics: ControllerMetrics,
        parts: PassParts,
        log: structlog.typing.FilteringBoundLogger,
    ) -> None:
        self._pods = ports.pods
        self._clock = ports.clock
        self._config = config
        self._log = log
        self._metrics = metrics.rollout
        self._safety_metrics = metrics.safety
        self._elector = parts.elector
        self._fleet = parts.fleet
        self._rules = parts.rules
        self._starts = parts.starts
        self._journal = parts.journal
        self._failures = parts.failures
        self._publisher = parts.publisher
        self._writer = RolloutWriter(
            ports.shadows, ports.events, metrics.rollout, config.policy.timeouts, parts.journal
        )
        self._cleanup = OptOutCleanup(ports.shadows, ports.nodes, ports.events)
        self._phases = PhaseTimer(metrics.rollout)
        self._prestage = PrestageKeeper(ports.shadows, parts.journal, ports.events)
        self._gate = WindowGate(ports.clock.now())
        self._told_quarantined: frozenset[str] = frozenset()
        self._autoscaler = AutoscalerGuard(
            ports.nodes, parts.fleet.nodes, ports.clock, log, rescan_seconds=config.resync_seconds
        )

    def run(self, leading: bool, *, hold_starts: bool = False) -> bool:
        """Decide and write once (starting nobody when `hold_starts`); True when a write met a
        conflict and a new pass is due."""
        now = self._clock.now()
        if self._lags_behind_own_writes():
            return False
        fleet = self._fleet
        touched = fleet.absorb(now)
        self._tell_quarantined(leading)
        paused, safety = self._rules.assess(now, fleet.book, touched, leading=leading)
        in_force = self._policy_in_force()
        touched |= self._follow(in_force, now, leading=leading)
        # A follower writes nothing: it lists no pods for drains and takes no pod census to
        # choose whom to start (what a pass costs kube-apiserver, twice over with two replicas).
        drains = self._drains() if leading else {}
        limit = self._starts.limit(in_force, self._config.policy.limit)
        self._metrics.set_concurrency_limit(limit.maximum)
        clock_says = self._clock_says(now)
        held = paused or hold_starts or not leading
        plan = self._plan(now, in_force, limit, clock_says, paused=held, safety=safety)
        if leading and in_force.prestage is not None and in_force.prestage.enabled:
            holders = self._shadows_named(fleet.book.holders())
            stopped = paused or safety.halt.halted
            plan = self._prestage.withdraw(plan, holders, in_force, stopped=stopped, now=now)
        history = self._observe_phases(touched, drains, now, leading=leading)
        outcome = self._write(plan, safety, now, leading=leading)
        touched |= self._absorb_written(outcome, now)
        if leading and not outcome.stopped_leading:
            touched |= self._keep_prestage(in_force, clock_says, now, paused or safety.halt.halted)
        self._guard_nodes(leading and not outcome.stopped_leading, outcome.started)
        self._failures.forget_old(fleet.book, now)
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

    def _tell_quarantined(self, leading: bool) -> None:
        """A log line and an Event (leader only) for each shadow newly set aside."""
        quarantined = self._fleet.book.quarantined()
        if leading:
            for name in quarantined.keys() - self._told_quarantined:
                if (shadow := self._fleet.book.shadow(name)) is not None:
                    self._writer.note_quarantined(shadow, quarantined[name])
        self._told_quarantined = frozenset(quarantined) if leading else frozenset()

    def _policy_in_force(self) -> EffectivePolicy:
        follower = self._rules.follower
        return follower.policy if follower is not None else ENVIRONMENT_POLICY

    def _lags_behind_own_writes(self) -> bool:
        """The mirror still shows one of this replica's writes undone (its event is late)."""
        mirror = self._fleet.shadows
        shown = [s for n in self._journal.names() if (s := mirror.get(n)) is not None]
        if self._journal.is_stale(shown):
            self._log.debug("shadows.mirror_lags_behind_own_writes")
            return True
        return False

    def _follow(self, in_force: EffectivePolicy, now: datetime, *, leading: bool) -> set[str]:
        """Follow the labels the budgets group by, and (as leader) clean up the orphans; the
        names of the shadows this touched."""
        fleet = self._fleet
        touched: set[str] = set()
        if fleet.follow_labels(frozenset(b.group_by for b in in_force.scheduling.budgets)):
            touched |= fleet.absorb(now)
        if leading and fleet.orphans:
            touched |= self._sweep(now)
        return touched

    def _sweep(self, now: datetime) -> set[str]:
        """Clean up the orphans; the names of the shadows deleted."""
        orphans = self._fleet.orphan_shadows()
        staying = {s.name for s in self._cleanup.sweep(orphans, [])}
        gone = {s.name for s in orphans} - staying
        self._fleet.removed(gone)
        return self._fleet.absorb(now) | gone

    def _shadows_named(self, names: set[str]) -> list[Shadow]:
        book = self._fleet.book
        return [s for n in sorted(names) if (s := book.shadow(n)) is not None]

    def _drains(self) -> dict[str, DrainProgress]:
        """Drain progress of every node being drained."""
        holders = self._shadows_named(self._fleet.book.holders())
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
        shadows = self._shadows_named(touched | self._fleet.book.holders())
        self._phases.observe(shadows, drains, now)
        self._rules.measured(self._phases.take_completed(), leading=leading)
        history = self._rules.timing.history
        self._metrics.set_expected_update(history.expected_seconds)
        return history

    def _write(
        self, plan: RolloutPlan, safety: SafetyPass, now: datetime, *, leading: bool
    ) -> WriteOutcome:
        """Write the plan and the gates' verdicts (leader only)."""
        if not leading:
            return WriteOutcome()
        outcome = self._writer.apply(plan, now, self._elector.is_leader)
        self._failures.timed_out(outcome.timed_out)
        if not outcome.stopped_leading:
            settle_gates(safety, outcome, self._writer, self._safety_metrics, now)
            self._failures.gate_failed(outcome.gate_failed)
        return outcome

    def _keep_prestage(
        self, in_force: EffectivePolicy, clock_says: ScheduleGate, now: datetime, stopped: bool
    ) -> set[str]:
        """Ask Idle nodes to prepare ahead, or stop asking (leader only); the shadows touched."""
        book = self._fleet.book
        hold = clock_says.hold
        stop = FleetStop(
            stopped=stopped,
            window_open=clock_says.may_start,
            opens_at=hold.until if hold is not None and clock_says.window_open else None,
        )
        fleet = (s for n in book.names() if (s := book.shadow(n)) is not None)
        versions = self._rules.versions.gate(in_force.scheduling.version)
        written = self._prestage.keep(
            fleet, in_force, stop, now, self._elector.is_leader, versions=versions
        )
        if not (written.stored or written.conflicted):
            return set()
        self._fleet.written(written.stored, written.conflicted)
        return self._fleet.absorb(now)

    def _absorb_written(self, outcome: WriteOutcome, now: datetime) -> set[str]:
        """Put what was written (or met a conflict) into the book; the shadows touched."""
        if not (outcome.stored or outcome.conflicted):
            return set()
        self._fleet.written(outcome.stored, outcome.conflicted)
        return self._fleet.absorb(now)

    def _guard_nodes(self, leading: bool, started: set[str]) -> None:
        """The autoscaler annotations on the nodes holding a slot (from the moment they start),
        what was there before on the others."""
        leading = leading and self._elector.is_leader()
        book = self._fleet.book
        names = book.holders() | started if leading else set()
        holding = {s.node_name for n in names if (s := book.shadow(n)) is not None}
        self._autoscaler.keep(holding, leading=leading)

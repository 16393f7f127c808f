"""ControllerService: the rollout controller's loop over its ports.

`tick()` is one decision: bring the mirror of shadows and opted-in Nodes (and, given a policy
repository, of the update policies) up to date, clean up opted-out nodes, decide again the
shadows that changed (or whose deadline passed), write the pass (only while holding the leader
Lease), publish metrics, the policy's status and the REASON of the nodes whose reason may have
changed. A paused policy (or a Node's pause label) keeps nodes from starting. `run(stop)`
repeats it whenever a shadow, Node or policy changes (watch threads feed the mirrors), and at
least every `tick_seconds`. Constructible in-process, so
`brupop simulate` can run, stop and restart it in a thread.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import structlog

from brupop.domain.concurrency import ConcurrencyLimit
from brupop.domain.drain_progress import DrainProgress
from brupop.domain.effective_policy import ENVIRONMENT_POLICY, EffectivePolicy, PolicySource
from brupop.domain.maintenance_window import WindowGate
from brupop.domain.scheduling_facts import SchedulingFacts
from brupop.domain.shadow import Shadow
from brupop.domain.start_holds import StartHold
from brupop.domain.version_gate import VersionStanding
from brupop.domain.waiting_reason import (
    GateFailureRecord,
    NodeReport,
    RolloutView,
    TimeoutRecord,
    clock_hold,
    report,
)
from brupop.ports.clock import Clock
from brupop.ports.errors import PortError
from brupop.ports.event_recorder import EventRecorder
from brupop.ports.lease_store import LeaseStore
from brupop.ports.node_repository import NodeRepository
from brupop.ports.pod_repository import PodRepository
from brupop.ports.rollout_metrics import RolloutMetrics
from brupop.ports.safety_metrics import SafetyMetrics
from brupop.ports.shadow_repository import ShadowRepository
from brupop.ports.update_policy_repository import UpdatePolicyRepository
from brupop.services.controller.autoscaler_guard import AutoscalerGuard
from brupop.services.controller.change_watch import ChangeWatch
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.drain_watch import observe_drains
from brupop.services.controller.fleet_mirror import FleetMirror
from brupop.services.controller.gate_settling import settle_gates
from brupop.services.controller.informer import Informer
from brupop.services.controller.leader_election import LeaderElector
from brupop.services.controller.node_pods import NodePods
from brupop.services.controller.node_reasons import NodeReasons
from brupop.services.controller.opt_out_cleanup import OptOutCleanup
from brupop.services.controller.phase_timing import PhaseTimer
from brupop.services.controller.pod_census import PodCensus
from brupop.services.controller.policy_follower import PolicyFollower
from brupop.services.controller.policy_rules import PolicyRules
from brupop.services.controller.quiet_metrics import QuietMetrics
from brupop.services.controller.rollout_safety import GatePorts, RolloutSafety
from brupop.services.controller.rollout_writer import RolloutWriter, WriteOutcome
from brupop.services.controller.start_rules import StartPorts, StartRules
from brupop.services.controller.write_journal import WriteJournal
from brupop.services.supervisor import RestartPolicy

_TIMEOUT_MEMORY = timedelta(hours=25)


class ControllerService:
    """One controller replica: decides and (as leader) writes the rollout."""

    def __init__(
        self,
        *,
        shadows: ShadowRepository,
        nodes: NodeRepository,
        pods: PodRepository,
        leases: LeaseStore,
        events: EventRecorder,
        clock: Clock,
        config: ControllerConfig,
        metrics: RolloutMetrics | None = None,
        watch_restart: RestartPolicy | None = None,
        policies: UpdatePolicyRepository | None = None,
        gates: GatePorts | None = None,
        safety_metrics: SafetyMetrics | None = None,
        starts: StartPorts | None = None,
    ) -> None:
        self._shadows, self._nodes, self._pods, self._clock = shadows, nodes, pods, clock
        self._watch_restart = watch_restart
        self._watch: ChangeWatch | None = None
        self.config = config
        self._metrics: RolloutMetrics = metrics or QuietMetrics()
        self.elector = LeaderElector(
            leases,
            clock,
            namespace=config.namespace,
            identity=config.identity,
            name=config.lease_name,
            lease_seconds=config.lease_seconds,
            renew_seconds=config.renew_seconds,
        )
        self._journal = WriteJournal()
        self._writer = RolloutWriter(
            shadows, events, self._metrics, config.policy.timeouts, self._journal
        )
        self._cleanup = OptOutCleanup(shadows, nodes, events)
        self._phases = PhaseTimer(self._metrics)
        self._gate = WindowGate(clock.now())
        self._timeouts: dict[str, TimeoutRecord] = {}
        self._gate_failures: dict[str, GateFailureRecord] = {}
        self._last_tick: float | None = None
        self._started_mono = clock.monotonic()
        self._wake = threading.Event()
        self._log = structlog.get_logger(__name__).bind(identity=config.identity)
        self.fleet = FleetMirror(shadows, nodes, config.policy)
        self._autoscaler = AutoscalerGuard(
            nodes, self.fleet.nodes, clock, self._log, rescan_seconds=config.resync_seconds
        )
        follower = (
            PolicyFollower(policies, events, config.namespace) if policies is not None else None
        )
        self._reasons = NodeReasons(self._log)
        # Gate checks get half the time a leader may go without renewing its Lease.
        budget = max(1.0, (config.lease_seconds - config.renew_seconds) / 2)
        safety = RolloutSafety(gates, nodes, clock, check_budget_seconds=budget)
        self._safety_metrics: SafetyMetrics = safety_metrics or QuietMetrics()
        self._rules = PolicyRules(follower, safety, self._metrics, self._safety_metrics)
        # The version gate reads the first-seen times that the policy rules keep.
        starts = replace(starts or StartPorts(), versions=self._rules.versions)
        if starts.census is None:  # listed only by a pass that can start a node
            starts = replace(starts, census=PodCensus(pods, nodes))
        if starts.pods is None:  # the blocking-pod rule reads the pods through a short cache
            starts = replace(starts, pods=NodePods(pods, clock, self._log))
        self._starts = StartRules(self.fleet, starts)
        self._view: RolloutView | None = None
        self._scheduling = SchedulingFacts()
        self._started_before: frozenset[str] = frozenset()
        self._holds_before: Mapping[str, StartHold] = {}
        self._followed = False
        self._term: int | None = None  # the Lease term the mirror was last listed for
        self._last_resync: float | None = None

    @property
    def policy(self) -> PolicyFollower | None:
        """The update policy followed (None: no policy repository, the behaviour before)."""
        return self._rules.follower

    @policy.setter
    def policy(self, follower: PolicyFollower | None) -> None:
        self._rules.follower = follower

    # --- the loop ------------------------------------------------------------------------

    def tick(self) -> None:
        """One decision (a few passes when writes met changes made meanwhile)."""
        leading = self.elector.ensure()
        self._metrics.set_leader(leading)
        if not leading:
            self._journal.forget()
        term = self.elector.term if leading else None
        self._catch_up(gained_leadership=term is not None and term != self._term)
        self._term = term
        for _ in range(self.config.passes_per_tick):
            if not self._pass(leading and self.elector.is_leader()):
                break
        self._last_tick = self._clock.monotonic()

    def run(self, stop: threading.Event) -> None:
        """Tick on every change and at least every `tick_seconds` until `stop` is set."""
        watch_stop = threading.Event()
        self._followed = True
        self._fill_before_following()
        self._watch = ChangeWatch(
            self._informers(),
            self.wake,
            watch_stop,
            watch_seconds=self.config.watch_seconds,
            restart=self._watch_restart,
        )
        self._watch.start()
        threading.Thread(target=self._wake_on, args=(stop,), name="stop-wake", daemon=True).start()
        self._log.info("controller.started", limit=str(self.config.policy.limit))
        try:
            while not stop.is_set():
                try:
                    self.tick()
                except PortError as error:
                    self._log.warning(
                        "controller.cluster_unavailable",
                        error=type(error).__name__,
                        reason=str(error),
                    )
                wait = min(self.config.tick_seconds, max(self.elector.seconds_until_due(), 0.05))
                if self._wake.wait(wait):
                    self._wake.clear()
                    stop.wait(self.config.settle_seconds)
        finally:
            watch_stop.set()
            self.elector.release()
            self._metrics.set_leader(False)
            self._log.info("controller.stopped")

    def wake(self) -> None:
        """Ask the loop for a pass now (a watched object changed)."""
        self._wake.set()

    def request_resync(self) -> None:
        """Make the next tick list everything again and repair the mirror from that list (what
        the periodic resync does every `resync_seconds`)."""
        self._last_resync = None

    def _wake_on(self, stop: threading.Event) -> None:
        """Interrupt the loop's wait as soon as `stop` is set."""
        stop.wait()
        self._wake.set()

    # --- what the HTTP surface reads ------------------------------------------------------

    def reports(self) -> list[NodeReport]:
        """Every node's row, from the shadows and what the last pass knew (built on demand)."""
        view = self._view
        if view is None:
            return []
        book = self.fleet.book
        return report([s for n in book.names() if (s := book.shadow(n)) is not None], view)

    def versions(self) -> list[VersionStanding]:
        """Each offered version's first-seen time, eligibility and hold, as of the last pass
        (empty without a policy object: nothing is tracked then)."""
        view = self._view
        if view is None:
            return []
        return self._rules.version_standings(self.fleet.book, view.now)

    def limit(self) -> ConcurrencyLimit:
        """The global limit the last pass applied: the policy's `maxConcurrent` when set, else
        `MAX_CONCURRENT_UPDATE` (also before the first pass)."""
        view = self._view
        return view.policy.limit if view is not None else self.config.policy.limit

    def scheduling(self) -> SchedulingFacts:
        """The budgets in use, the expected update time and the clock's hold, as of the last
        pass (the hold's sentence is made here: a closed window's next opening is a search)."""
        view = self._view
        facts = self._scheduling
        return replace(facts, hold=clock_hold(view)) if view is not None else facts

    def work_done(self) -> tuple[int, int]:
        """(shadows decided, nodes explained) so far: what a pass with nothing new must not
        add to, beyond the nodes in a slot."""
        return self.fleet.book.decided, self._reasons.explained

    def is_ready(self) -> bool:
        """At least one pass has completed, and no change watch keeps failing."""
        watch_failing = self._watch is not None and self._watch.failing()
        return self._last_tick is not None and not watch_failing

    def is_healthy(self) -> bool:
        """The loop has completed a tick recently (or is still starting)."""
        limit = max(60.0, 10 * self.config.tick_seconds)
        last = self._last_tick if self._last_tick is not None else self._started_mono
        return self._clock.monotonic() - last < limit

    # --- one pass -------------------------------------------------------------------------

    def _informers(self) -> dict[str, Informer[Any]]:
        """What the change watch follows."""
        informers: dict[str, Informer[Any]] = {
            "shadows": self.fleet.shadow_informer,
            "nodes": self.fleet.node_informer,
        }
        if self.policy is not None:
            informers["policies"] = self.policy.informer
        return informers

    def _fill_before_following(self) -> None:
        """A first list, so the watch threads start from it rather than list again."""
        for informer in self._informers().values():
            try:
                informer.relist()
            except PortError as error:
                self._log.debug("mirror.fill_failed", kind=informer.kind, error=str(error))

    def _catch_up(self, *, gained_leadership: bool) -> None:
        now = self._clock.monotonic()
        last = self._last_resync
        resync = last is None or now - last >= self.config.resync_seconds
        self.fleet.catch_up(
            followed=self._followed,
            resync=resync,
            gained_leadership=gained_leadership,
            by_list=self.config.catch_up_by_list and not self._followed,
        )
        if self.policy is not None:
            by_list = self.config.catch_up_by_list and not self._followed
            self.policy.catch_up(followed=self._followed, resync=resync or by_list)
        if resync:
            self._last_resync = now

    def _pass(self, leading: bool) -> bool:
        """Decide and write once; True when a write met a conflict and a new pass is due."""
        now = self._clock.now()
        fleet = self.fleet
        if self._lags_behind_own_writes():
            return False
        touched = fleet.absorb(now)
        paused, safety = self._rules.assess(now, fleet.book, touched, leading=leading)
        in_force = self._policy_in_force()
        if fleet.follow_labels(frozenset(b.group_by for b in in_force.scheduling.budgets)):
            touched |= fleet.absorb(now)
        if leading and fleet.orphans:
            touched |= self._sweep(now)
        drains = self._drains()
        window = self.config.window
        limit = self._starts.limit(in_force, self.config.policy.limit)
        policy = self.config.policy
        if limit != policy.limit:
            policy = replace(policy, limit=limit)
        self._metrics.set_concurrency_limit(limit.maximum)
        self._gate = self._gate.advance(window, now, any_ready=fleet.book.ready_count > 0)
        clock_says = self._rules.schedule(window, self._gate.is_open, now)
        soaking = safety.soaking
        plan = fleet.book.plan(
            now,
            may_start=clock_says.may_start and not paused and safety.may_start,
            withheld=safety.withheld(),
            only=safety.canaries if soaking else None,
            limit=limit,
            choose=self._starts.chooser(in_force, now),
        )
        self._phases.observe(self._shadows_named(touched | fleet.book.holders()), drains, now)
        self._rules.measured(self._phases.take_completed(), leading=leading)
        history = self._rules.timing.history
        self._metrics.set_expected_update(history.expected_seconds)
        outcome = WriteOutcome()
        if leading:
            outcome = self._writer.apply(plan, now, self.elector.is_leader)
            self._timeouts.update(outcome.timed_out)
            if not outcome.stopped_leading:
                settle_gates(safety, outcome, self._writer, self._safety_metrics, now)
                self._gate_failures.update(outcome.gate_failed)
        if outcome.stored or outcome.conflicted:
            fleet.written(outcome.stored, outcome.conflicted)
            touched |= fleet.absorb(now)
        self._guard_nodes(leading and not outcome.stopped_leading, outcome.started)
        self._forget_old_timeouts(now)
        view = RolloutView(
            now=now,
            policy=policy,
            window=window,
            window_open=clock_says.window_open,
            schedule_hold=clock_says.hold,
            started=frozenset(outcome.started),
            drains=drains,
            timeouts=dict(self._timeouts),
            paused=paused,
            held_back=fleet.book.held_back(),
            halted=safety.halt.message if safety.halt.halted else None,
            blocked=safety.alerts.reason,
            soak=safety.soak.message(now) if safety.soak is not None and soaking else None,
            canaries=safety.canaries or frozenset(),
            gate_holds=safety.gate_holds(),
            gate_failures=dict(self._gate_failures),
            start_holds=self._starts.holds,
        )
        self._publish(view, touched)
        holding = fleet.book.holders() | view.started
        budgets = self._starts.usage(in_force, holding)
        self._metrics.set_budgets_in_use({(u.budget, u.group): u.in_use for u in budgets})
        self._scheduling = SchedulingFacts(
            budgets,
            history.expected_seconds,
            len(history.seconds),
            finish_by=in_force.source is not PolicySource.ENVIRONMENT
            and in_force.scheduling.finish_by,
        )
        self._rules.publish(
            fleet.book, len(holding), paused, safety, now, leading=leading, budgets=budgets
        )
        return outcome.conflicts > 0 and not outcome.stopped_leading

    def _policy_in_force(self) -> EffectivePolicy:
        follower = self.policy
        return follower.policy if follower is not None else ENVIRONMENT_POLICY

    def _lags_behind_own_writes(self) -> bool:
        """The mirror still shows one of this replica's writes undone (its event is late)."""
        mirror = self.fleet.shadows
        shown = [s for n in self._journal.names() if (s := mirror.get(n)) is not None]
        if self._journal.is_stale(shown):
            self._log.debug("shadows.mirror_lags_behind_own_writes")
            return True
        return False

    def _sweep(self, now: datetime) -> set[str]:
        """Clean up the orphans; the names of the shadows deleted."""
        orphans = self.fleet.orphan_shadows()
        staying = {s.name for s in self._cleanup.sweep(orphans, [])}
        gone = {s.name for s in orphans} - staying
        self.fleet.removed(gone)
        return self.fleet.absorb(now) | gone

    def _shadows_named(self, names: set[str]) -> list[Shadow]:
        book = self.fleet.book
        return [s for n in sorted(names) if (s := book.shadow(n)) is not None]

    def _drains(self) -> dict[str, DrainProgress]:
        """Drain progress of every node being drained."""
        holders = self._shadows_named(self.fleet.book.holders())
        return observe_drains(holders, self.fleet.nodes.get, self._pods, self._log)

    def _guard_nodes(self, leading: bool, started: set[str]) -> None:
        """The autoscaler annotations on the nodes holding a slot (from the moment they start),
        what was there before on the others."""
        leading = leading and self.elector.is_leader()
        book = self.fleet.book
        names = book.holders() | started if leading else set()
        holding = {s.node_name for n in names if (s := book.shadow(n)) is not None}
        self._autoscaler.keep(holding, leading=leading)

    def _forget_old_timeouts(self, now: datetime) -> None:
        """Timeouts and gate failures are recalled in REASON for a day, then forgotten."""
        book = self.fleet.book
        self._timeouts = {
            name: record
            for name, record in self._timeouts.items()
            if name in book and now - record.at < _TIMEOUT_MEMORY
        }
        self._gate_failures = {
            name: record
            for name, record in self._gate_failures.items()
            if name in book and now - record.at < _TIMEOUT_MEMORY
        }

    def _publish(self, view: RolloutView, touched: set[str]) -> None:
        """Metrics, and the reasons of the nodes whose reason may have changed."""
        book = self.fleet.book
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
        self._view = view
        self._metrics.set_hosts(Counter(book.states), Counter(book.versions))
        self._metrics.set_waiting(self._reasons.waiting())

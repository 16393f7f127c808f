"""ControllerService: the rollout controller's loop over its ports.

`tick()` is one decision: bring the mirror of shadows and opted-in Nodes (and, given a policy
repository, of the update policies) up to date, clean up opted-out nodes, decide again the
shadows that changed (or whose deadline passed), write the pass (only while holding the leader
Lease), publish metrics, the policy's status and the REASON of the nodes whose reason may have
changed. A paused policy (or a Node's pause label) keeps nodes from starting. `run(stop)`
repeats it whenever a shadow, Node or policy changes (watch threads feed the mirrors), and at
least every `tick_seconds`. Constructible in-process, so
`brupop simulate` can run, stop and restart it in a thread.

This module holds the loop and the wiring; the parts live apart: MirrorCatchUp (keeping the
mirrors up to date), RolloutPass (deciding and writing), PassPublisher (the view, reasons,
metrics and status a pass publishes) and StatusReadout (what the HTTP surface reads).
"""

from __future__ import annotations

import threading
from dataclasses import replace

import structlog

from brupop.domain.reporting.waiting_reason import NodeReport
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.starting.scheduling_facts import SchedulingFacts
from brupop.domain.starting.version_gate import VersionStanding
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
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.mirror_catch_up import MirrorCatchUp
from brupop.services.controller.mirrors.change_watch import ChangeWatch
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.mirrors.node_pods import NodePods
from brupop.services.controller.mirrors.pod_census import PodCensus
from brupop.services.controller.node_reasons import NodeReasons
from brupop.services.controller.pass_publishing import PassPublisher
from brupop.services.controller.policy.policy_follower import PolicyFollower
from brupop.services.controller.policy.policy_rules import PolicyRules
from brupop.services.controller.rollout_pass import RolloutPass
from brupop.services.controller.runtime.leader_election import LeaderElector
from brupop.services.controller.runtime.pass_guard import PassGuard
from brupop.services.controller.runtime.quiet_metrics import QuietMetrics
from brupop.services.controller.safety.rollout_safety import GatePorts, RolloutSafety
from brupop.services.controller.starts.start_rules import StartPorts, StartRules
from brupop.services.controller.status_readout import StatusReadout
from brupop.services.controller.writing.recalled_failures import RecalledFailures
from brupop.services.controller.writing.write_journal import WriteJournal
from brupop.services.supervisor import RestartPolicy


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
        self.config, self._clock = config, clock
        self._watch_restart = watch_restart
        self._watch: ChangeWatch | None = None
        self._metrics: RolloutMetrics = metrics or QuietMetrics()
        self._safety_metrics: SafetyMetrics = safety_metrics or QuietMetrics()
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
        self._wake = threading.Event()
        self._log = structlog.get_logger(__name__).bind(identity=config.identity)
        self.fleet = FleetMirror(shadows, nodes, config.policy)
        self._reasons = NodeReasons(self._log)
        self._rules = self._policy_rules(policies, events, gates, nodes)
        self._assemble(shadows, nodes, pods, events, starts)
        self._mirrors = MirrorCatchUp(self.fleet, self._rules, config, clock, self._log)

    def _assemble(
        self,
        shadows: ShadowRepository,
        nodes: NodeRepository,
        pods: PodRepository,
        events: EventRecorder,
        starts: StartPorts | None,
    ) -> None:
        """The pass (deciding and writing), its publisher, and the HTTP surface's readout."""
        clock, config = self._clock, self.config
        start_rules = StartRules(self.fleet, self._start_ports(starts, pods, nodes))
        failures = RecalledFailures()
        publisher = PassPublisher(
            fleet=self.fleet,
            config=config,
            reasons=self._reasons,
            rules=self._rules,
            starts=start_rules,
            failures=failures,
            metrics=self._metrics,
        )
        self._rollout_pass = RolloutPass(
            shadows=shadows,
            nodes=nodes,
            pods=pods,
            events=events,
            clock=clock,
            config=config,
            metrics=self._metrics,
            safety_metrics=self._safety_metrics,
            log=self._log,
            elector=self.elector,
            fleet=self.fleet,
            rules=self._rules,
            starts=start_rules,
            journal=self._journal,
            failures=failures,
            publisher=publisher,
        )
        self._readout = StatusReadout(
            fleet=self.fleet,
            rules=self._rules,
            reasons=self._reasons,
            published=publisher,
            config=config,
            clock=clock,
        )

    def _policy_rules(
        self,
        policies: UpdatePolicyRepository | None,
        events: EventRecorder,
        gates: GatePorts | None,
        nodes: NodeRepository,
    ) -> PolicyRules:
        """The policy followed (if any) and the safety rules, with their metrics."""
        config = self.config
        follower = (
            PolicyFollower(policies, events, config.namespace) if policies is not None else None
        )
        # Gate checks get half the time a leader may go without renewing its Lease.
        budget = max(1.0, (config.lease_seconds - config.renew_seconds) / 2)
        safety = RolloutSafety(gates, nodes, self._clock, check_budget_seconds=budget)
        return PolicyRules(follower, safety, self._metrics, self._safety_metrics)

    def _start_ports(
        self, starts: StartPorts | None, pods: PodRepository, nodes: NodeRepository
    ) -> StartPorts:
        """What the start rules read, with the defaults for what was not given."""
        # The version gate reads the first-seen times that the policy rules keep.
        starts = replace(starts or StartPorts(), versions=self._rules.versions)
        if starts.census is None:  # listed only by a pass that can start a node
            starts = replace(starts, census=PodCensus(pods, nodes))
        if starts.pods is None:  # the blocking-pod rule reads the pods through a short cache
            starts = replace(starts, pods=NodePods(pods, self._clock, self._log))
        return starts

    @property
    def policy(self) -> PolicyFollower | None:
        """The update policy followed (None: no policy repository, the behaviour before)."""
        return self._rules.follower

    @policy.setter
    def policy(self, follower: PolicyFollower | None) -> None:
        self._rules.follower = follower

    # --- the loop ------------------------------------------------------------------------

    def tick(self, *, hold_starts: bool = False) -> None:
        """One decision (a few passes when writes met changes made meanwhile); `hold_starts`:
        start nobody (while passes keep failing, see PassGuard)."""
        leading = self.elector.ensure()
        self._metrics.set_leader(leading)
        if not leading:
            self._journal.forget()
        self._mirrors.catch_up(self.elector.term if leading else None)
        for _ in range(self.config.passes_per_tick):
            run = self._rollout_pass.run
            if not run(leading and self.elector.is_leader(), hold_starts=hold_starts):
                break
        self._readout.ticked()

    def run(self, stop: threading.Event) -> None:
        """Tick on every change and at least every `tick_seconds` until `stop` is set."""
        watch_stop = threading.Event()
        self._watch = ChangeWatch(
            self._mirrors.start_following(),
            self.wake,
            watch_stop,
            watch_seconds=self.config.watch_seconds,
            restart=self._watch_restart,
        )
        self._watch.start()
        threading.Thread(target=self._wake_on, args=(stop,), name="stop-wake", daemon=True).start()
        self._log.info("controller.started", limit=str(self.config.policy.limit))
        guard = PassGuard(
            self._clock,
            self._log,
            self._metrics.count_pass_failure,
            base_seconds=self.config.tick_seconds,
        )
        try:
            while not stop.is_set():
                try:
                    if guard.due():
                        self.tick(hold_starts=guard.holding_starts)
                        guard.succeeded()
                    else:  # backing off after a failed pass: keep the Lease meanwhile
                        self._metrics.set_leader(self.elector.ensure())
                except PortError as error:
                    self._log.warning(
                        "controller.cluster_unavailable",
                        error=type(error).__name__,
                        reason=str(error),
                    )
                except Exception as error:  # a bug: the pass fails closed, the loop goes on
                    guard.failed(error)
                due = min(self.elector.seconds_until_due(), guard.seconds_until_due())
                wait = min(self.config.tick_seconds, max(due, 0.05))
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
        self._mirrors.request_resync()

    def _wake_on(self, stop: threading.Event) -> None:
        """Interrupt the loop's wait as soon as `stop` is set."""
        stop.wait()
        self._wake.set()

    # --- what the HTTP surface reads (see StatusReadout) --------------------------------

    def reports(self) -> list[NodeReport]:
        """Every node's row, as of the last pass."""
        return self._readout.reports()

    def versions(self) -> list[VersionStanding]:
        """Each offered version's standing, as of the last pass."""
        return self._readout.versions()

    def limit(self) -> ConcurrencyLimit:
        """The global limit the last pass applied."""
        return self._readout.limit()

    def scheduling(self) -> SchedulingFacts:
        """The budgets in use, the expected update time and the clock's hold."""
        return self._readout.scheduling()

    def work_done(self) -> tuple[int, int]:
        """(shadows decided, nodes explained) so far."""
        return self._readout.work_done()

    def is_ready(self) -> bool:
        """At least one pass has completed, and no change watch keeps failing."""
        watch_failing = self._watch is not None and self._watch.failing()
        return self._readout.is_ready(watch_failing=watch_failing)

    def is_healthy(self) -> bool:
        """The loop has completed a tick recently (or is still starting)."""
        return self._readout.is_healthy()

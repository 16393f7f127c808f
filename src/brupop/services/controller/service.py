"""ControllerService: the rollout controller's loop over its ports.

`tick()` is one decision: bring the mirror of shadows and opted-in Nodes (and, given a policy
repository, of the update policies) up to date, clean up opted-out nodes, decide again the
shadows that changed (or whose deadline passed), write the pass (only while holding the leader
Lease), publish metrics, the policy's status and the REASON of the nodes whose reason may have
changed. A paused policy (or a Node's pause label) keeps nodes from starting. `run(stop)`
repeats it whenever a shadow, Node or policy changes (watch threads feed the mirrors), and at
least every `tick_seconds`. Constructible in-process, so
`brupop simulate` can run, stop and restart it in a thread.

This module holds the loop; the parts live apart and the controller's container
(`brupop.entrypoints.controller.container`) builds each once: MirrorCatchUp (keeping the
mirrors up to date), RolloutPass (deciding and writing, with the PassPublisher of the view,
reasons, metrics and status a pass publishes) and StatusReadout (what the HTTP surface reads).
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

import structlog

from brupop.domain.reporting.waiting_reason import NodeReport
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.starting.scheduling_facts import SchedulingFacts
from brupop.domain.starting.version_gate import VersionStanding
from brupop.ports.clock import Clock
from brupop.ports.errors import PortError
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.mirror_catch_up import MirrorCatchUp
from brupop.services.controller.rollout_pass import RolloutPass
from brupop.services.controller.runtime.leader_election import LeaderElector
from brupop.services.controller.runtime.pass_guard import PassGuard
from brupop.services.controller.safety.rollout_safety import RolloutSafety
from brupop.services.controller.status_readout import StatusReadout
from brupop.services.runtime.informer import Following, Informer


def replica_log(identity: str) -> structlog.typing.FilteringBoundLogger:
    """The logger every part of one replica writes with: each line names the replica."""
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(__name__)
    return logger.bind(identity=identity)


class ControllerService:
    """One controller replica: decides and (as leader) writes the rollout."""

    def __init__(
        self,
        *,
        elector: LeaderElector,
        mirrors: MirrorCatchUp,
        rollout_pass: RolloutPass,
        safety: RolloutSafety,
        readout: StatusReadout,
        clock: Clock,
        config: ControllerConfig,
        metrics: RolloutMetrics,
        log: structlog.typing.FilteringBoundLogger,
    ) -> None:
        self.config = config
        self.elector = elector
        self.fleet = mirrors.fleet
        self._mirrors = mirrors
        self._rollout_pass = rollout_pass
        self._safety = safety
        self._readout = readout
        self._clock = clock
        self._metrics = metrics
        self._log = log
        self._followed: list[Informer[Any]] = []
        self._wake = threading.Event()
        self._woken_by: set[str] = set()  # what asked for a pass since the last one

    # --- the loop ------------------------------------------------------------------------

    def tick(self, *, hold_starts: bool = False) -> None:
        """One decision (a few passes when writes met changes made meanwhile, sharing one budget
        for Prometheus and the probes); `hold_starts`: start nobody (while passes keep failing,
        see PassGuard). Its loop thread's CPU time goes to the pass CPU metric."""
        began = time.thread_time()
        leading = self.elector.ensure()
        self._metrics.set_leader(leading)
        self._mirrors.catch_up(self.elector.term if leading else None)
        with self._safety.tick():  # one budget for the outside reads of every pass
            for _ in range(self.config.passes_per_tick):
                run = self._rollout_pass.run
                if not run(leading and self.elector.is_leader(), hold_starts=hold_starts):
                    break
        self._readout.ticked()
        self._metrics.observe_pass_cpu(time.thread_time() - began)

    def run(self, stop: threading.Event) -> None:
        """Tick on every change and at least every `tick_seconds` until `stop` is set."""
        following = Following(
            self.config.watch_seconds,
            restart=self.config.watch_restart,
            resync_seconds=self.config.resync_seconds,
        )
        self._followed = list(self._mirrors.start_following().values())
        for informer in self._followed:
            informer.start(functools.partial(self.wake, informer.kind), following=following)
        threading.Thread(target=self._wake_on, args=(stop,), name="stop-wake", daemon=True).start()
        self._log.info("controller.started", limit=str(self.config.rollout_rules.limit))
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
                due = self.elector.seconds_until_due()
                if guard.failing:  # a retry's back-off; a healthy guard is "due" at any time
                    due = min(due, guard.seconds_until_due())
                wait = min(self.config.tick_seconds, max(due, 0.05))
                woken = self._wake.wait(wait)
                if woken:
                    self._wake.clear()
                    stop.wait(self.config.settle_seconds)
                self._log_pass_due(woken, due)
        finally:
            for informer in self._followed:
                informer.stopping.set()
            self.elector.release()
            self._metrics.set_leader(False)
            self._log.info("controller.stopped")

    def wake(self, by: str = "request") -> None:
        """Ask the loop for a pass now (`by`: the watch whose object changed)."""
        self._woken_by.add(by)
        self._wake.set()

    def _log_pass_due(self, woken: bool, due: float) -> None:
        """At debug, why the next pass runs: the watches that woke the loop, or its wait ending
        (the Lease's next renewal in `lease_due_seconds`, else the tick), so a loop passing
        many times a second shows in its log which of them drives it."""
        by, self._woken_by = self._woken_by, set()
        self._log.debug(
            "controller.pass_due",
            woken_by=sorted(by) if woken else [],
            lease_due_seconds=round(due, 3),
        )

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
        watch_failing = any(informer.failing for informer in self._followed)
        return self._readout.is_ready(watch_failing=watch_failing)

    def is_healthy(self) -> bool:
        """The loop has completed a tick recently (or is still starting)."""
        return self._readout.is_healthy()

"""ControllerService: the rollout controller's loop over its ports.

`tick()` is one decision: list every shadow afresh, clean up opted-out nodes, decide the pass
with the domain policy, write it (only while holding the leader Lease), publish metrics and the
REASON of every node. `run(stop)` repeats it whenever a shadow or Node changes (watch-driven),
and at least every `tick_seconds`. Constructible in-process, so `brupop simulate` can run,
stop and restart it in a thread.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import structlog

from brupop.domain.cluster import Node
from brupop.domain.drain_progress import DrainProgress, drain_progress
from brupop.domain.maintenance_window import WindowGate
from brupop.domain.rollout import plan_rollout, ready_to_start
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.domain.waiting_reason import NodeReport, Reason, RolloutView, TimeoutRecord, report
from brupop.ports.clock import Clock
from brupop.ports.errors import PortError
from brupop.ports.event_recorder import EventRecorder
from brupop.ports.lease_store import LeaseStore
from brupop.ports.node_repository import NodeRepository
from brupop.ports.pod_repository import PodRepository
from brupop.ports.rollout_metrics import RolloutMetrics
from brupop.ports.shadow_repository import ShadowRepository
from brupop.services.controller.change_watch import ChangeWatch, NodeChanges, Watchable
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.leader_election import LeaderElector
from brupop.services.controller.opt_out_cleanup import OptOutCleanup
from brupop.services.controller.phase_timing import PhaseTimer
from brupop.services.controller.quiet_metrics import QuietMetrics
from brupop.services.controller.rollout_writer import RolloutWriter, WriteOutcome
from brupop.services.controller.write_journal import WriteJournal
from brupop.services.supervisor import RestartPolicy

_STALE_RELISTS = 3
_TROUBLE = frozenset(
    {Reason.TIMED_OUT, Reason.CRASHED, Reason.DRAIN_BLOCKED, Reason.BACKING_OFF, Reason.NO_STATUS}
)
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
        self._reasons: dict[str, Reason] = {}
        self._reports: list[NodeReport] = []
        self._last_tick: float | None = None
        self._started_mono = clock.monotonic()
        self._wake = threading.Event()
        self._log = structlog.get_logger(__name__).bind(identity=config.identity)

    # --- the loop ------------------------------------------------------------------------

    def tick(self) -> None:
        """One decision (a few passes when writes met changes made meanwhile)."""
        leading = self.elector.ensure()
        self._metrics.set_leader(leading)
        if not leading:
            self._journal.forget()
        for _ in range(self.config.passes_per_tick):
            if not self._pass(leading and self.elector.is_leader()):
                break
        self._last_tick = self._clock.monotonic()

    def run(self, stop: threading.Event) -> None:
        """Tick on every change and at least every `tick_seconds` until `stop` is set."""
        sources: dict[str, Watchable] = {"shadows": self._shadows, "nodes": self._nodes}
        watch_stop = threading.Event()
        self._watch = ChangeWatch(
            sources,
            self.wake,
            watch_stop,
            relevant={"nodes": NodeChanges()},
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

    def _wake_on(self, stop: threading.Event) -> None:
        """Interrupt the loop's wait as soon as `stop` is set."""
        stop.wait()
        self._wake.set()

    # --- what the HTTP surface reads ------------------------------------------------------

    def reports(self) -> list[NodeReport]:
        """Every node's row as of the last pass."""
        return list(self._reports)

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

    def _pass(self, leading: bool) -> bool:
        """Decide and write once; True when a write met a conflict and a new pass is due."""
        now = self._clock.now()
        shadows = self._fresh_shadows()
        if shadows is None:
            return False
        nodes = list(self._nodes.list().items)
        if leading:
            shadows = self._cleanup.sweep(shadows, nodes)
        drains = self._drains(shadows, nodes)
        policy, window = self.config.policy, self.config.window
        any_ready = bool(ready_to_start(shadows, now, policy))
        self._gate = self._gate.advance(window, now, any_ready=any_ready)
        plan = plan_rollout(shadows, now, policy, may_start=self._gate.is_open)
        self._phases.observe(shadows, drains, now)
        outcome = WriteOutcome()
        if leading:
            outcome = self._writer.apply(plan, now, self.elector.is_leader)
            self._timeouts.update(outcome.timed_out)
        if outcome.written:
            shadows = self._after_writes(shadows)
        self._forget_old_timeouts(shadows, now)
        view = RolloutView(
            now=now,
            policy=policy,
            window=window,
            window_open=self._gate.is_open,
            started=frozenset(outcome.started),
            drains=drains,
            timeouts=dict(self._timeouts),
        )
        self._publish(shadows, view)
        return outcome.conflicts > 0 and not outcome.stopped_leading

    def _fresh_shadows(self) -> list[Shadow] | None:
        """A list that shows every write this replica made; None if the store lags behind."""
        for _ in range(_STALE_RELISTS):
            shadows = list(self._shadows.list().items)
            if not self._journal.is_stale(shadows):
                return shadows
        self._log.warning("shadows.list_lags_behind_own_writes")
        return None

    def _after_writes(self, decided_from: Sequence[Shadow]) -> list[Shadow]:
        """The shadows as they are now, for the status view (our writes included)."""
        kept = {shadow.name for shadow in decided_from}
        try:
            return [s for s in self._shadows.list().items if s.name in kept]
        except PortError:
            return list(decided_from)

    def _drains(self, shadows: Sequence[Shadow], nodes: Sequence[Node]) -> dict[str, DrainProgress]:
        """Drain progress of every node being drained (spec RebootedIntoUpdate, cordoned)."""
        cordoned = {node.name for node in nodes if node.unschedulable}
        drains: dict[str, DrainProgress] = {}
        for shadow in shadows:
            status = shadow.status
            if (
                status is None
                or shadow.spec.state is not UpdateState.REBOOTED_INTO_UPDATE
                or status.current_state is not UpdateState.STAGED_AND_PERFORMED_UPDATE
                or shadow.node_name not in cordoned
            ):
                continue
            try:
                pods = self._pods.list_on_node(shadow.node_name)
                namespaces = sorted({pod.namespace for pod in pods})
                budgets = [b for ns in namespaces for b in self._pods.list_disruption_budgets(ns)]
            except PortError as error:
                self._log.debug("drain.unobservable", node=shadow.node_name, error=str(error))
                continue
            drains[shadow.name] = drain_progress(pods, budgets)
        return drains

    def _forget_old_timeouts(self, shadows: Sequence[Shadow], now: datetime) -> None:
        listed = {shadow.name for shadow in shadows}
        self._timeouts = {
            name: record
            for name, record in self._timeouts.items()
            if name in listed and now - record.at < _TIMEOUT_MEMORY
        }

    def _publish(self, shadows: Sequence[Shadow], view: RolloutView) -> None:
        rows = report(shadows, view)
        self._reports = rows
        reported = [s.status for s in shadows if s.status is not None]
        self._metrics.set_hosts(
            Counter(status.current_state.value for status in reported),
            Counter(status.current_version for status in reported),
        )
        waiting = Counter(row.reason.value for row in rows if row.reason.is_waiting)
        self._metrics.set_waiting(
            {r.value: waiting.get(r.value, 0) for r in Reason if r.is_waiting}
        )
        self._log_reason_changes(rows)

    def _log_reason_changes(self, rows: Sequence[NodeReport]) -> None:
        """One line when a node's reason changes (never one per pass): INFO when the node is
        held up by trouble, DEBUG for the ordinary course of a rollout."""
        current: Mapping[str, Reason] = {row.shadow: row.reason for row in rows}
        for row in rows:
            if self._reasons.get(row.shadow) is not row.reason:
                emit = self._log.info if row.reason in _TROUBLE else self._log.debug
                emit("node.reason", node=row.node, reason=row.reason.value, detail=row.detail)
        self._reasons = dict(current)

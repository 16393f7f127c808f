"""RolloutNotices: turns what the controller already tells its ports into notifications.

The controller's pass does not know about notifications. The composition root wraps its
EventRecorder and its metrics (entrypoints/controller/notifying_ports.py) and hands each call
here, where it hangs:

* node updated / node failed: the `UpdateCompleted`, `UpdateFailed`, `UpdateTimedOut`,
  `HealthGateFailed` and `RebootHookFailed` Events
  (`domain.notifications.from_cluster_event`);
* rollout started: the first `UpdateStarted` Event towards a version, once per version the
  controller offers (never a version an agent merely reports); rollout finished: hosts per
  version and state (`set_hosts`, every pass); both through `RolloutTracker`;
* fleet paused / halted / resumed: `set_fleet_paused` and `set_fleet`, through `FleetTracker`;
* drain blocked: the nodes-waiting counts (`set_waiting`): when nodes wait on `drain_blocked`,
  the rows of `brupop status` name them, and their pods and budgets are read through the
  PodRepository port (once per blocked drain).

Only the leader sends (`set_leader`, every tick); the trackers follow the fleet on every replica,
so a replica that takes over knows which rollout is under way. Nothing here raises into the
controller's loop: an unexpected error is logged once and the notification is lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

import structlog

from brupop.domain.cluster.drain_progress import drain_progress
from brupop.domain.cluster.objects import ClusterEvent
from brupop.domain.reason import Reason
from brupop.domain.reporting.notifications import (
    Notification,
    NotificationKind,
    drain_blocked,
    from_cluster_event,
    started_version,
)
from brupop.domain.reporting.rollout_tracking import FleetTracker, RolloutTracker
from brupop.domain.reporting.waiting_reason import NodeReport
from brupop.ports.clock import Clock
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import PortError
from brupop.ports.monitoring.notifier import Notifier

_BLOCKED = Reason.DRAIN_BLOCKED.value
_RECHECK_SECONDS = 30.0  # how often an unchanged drain_blocked count is looked at again


class RolloutNotices:
    """The controller's notifications, leader-only, never raising."""

    def __init__(self, notifier: Notifier, clock: Clock, pods: PodRepository) -> None:
        self._notifier = notifier
        self._clock = clock
        self._pods = pods
        self._leading = False
        self._rollout = RolloutTracker()
        self._fleet = FleetTracker()
        self._halted = False
        self._reports: Callable[[], Iterable[NodeReport]] = list
        self._blocked: set[str] = set()
        self._blocked_count = 0
        self._checked_at: float | None = None
        self._failed_once = False
        self._log = structlog.get_logger(__name__)

    def read_reports_from(self, reports: Callable[[], Iterable[NodeReport]]) -> None:
        """Where the rows of `brupop status` come from (the service, built after the metrics)."""
        self._reports = reports

    def leader(self, leading: bool) -> None:
        self._leading = leading

    def event(self, event: ClusterEvent) -> None:
        self._guarded(self._on_event, event)

    def hosts(self, states: Mapping[str, int], versions: Mapping[str, int]) -> None:
        self._guarded(
            lambda: self._send(
                self._rollout.observe(states, versions, self._now(), following=not self._leading)
            )
        )

    def fleet(self, *, paused: bool, halted: bool | None = None) -> None:
        if halted is not None:
            self._halted = halted
        self._guarded(
            lambda: self._send(
                self._fleet.observe(paused=paused, halted=self._halted, now=self._now())
            )
        )

    def waiting(self, reasons: Mapping[str, int]) -> None:
        self._guarded(self._on_waiting, reasons)

    # --- the moments ------------------------------------------------------------------------

    def _on_event(self, event: ClusterEvent) -> None:
        version = started_version(event)
        if version is not None:
            self._send(self._rollout.starting(version, self._now()))
            return
        notification = from_cluster_event(event, self._now())
        if notification is None:
            return
        if notification.kind is NotificationKind.NODE_FAILED:
            self._rollout.count_failure()
        self._send([notification])

    def _on_waiting(self, reasons: Mapping[str, int]) -> None:
        count = reasons.get(_BLOCKED, 0)
        if count == 0:
            self._blocked.clear()
            self._blocked_count = 0
            return
        mono = self._clock.monotonic()
        due = self._checked_at is None or mono - self._checked_at >= _RECHECK_SECONDS
        if count == self._blocked_count and not due:
            return
        self._blocked_count = count
        self._checked_at = mono
        rows = [row for row in self._reports() if row.reason is Reason.DRAIN_BLOCKED]
        now_blocked = {row.node for row in rows}
        for row in rows:
            if row.node not in self._blocked:
                self._send([self._drain_notice(row)])
        self._blocked = now_blocked

    def _drain_notice(self, row: NodeReport) -> Notification:
        """The pods and budgets holding the drain, read now (the detail text if unreadable)."""
        try:
            pods = self._pods.list_on_node(row.node)
            namespaces = sorted({pod.namespace for pod in pods})
            budgets = [b for ns in namespaces for b in self._pods.list_disruption_budgets(ns)]
        except PortError:
            progress = None
        else:
            progress = drain_progress(pods, budgets)
        if progress is None or not progress.budgets:
            notice = drain_blocked(row.node, (), (), self._now())
            return Notification(
                notice.kind, notice.at, f"{row.node}: {row.detail}", node=row.node, reason=_BLOCKED
            )
        return drain_blocked(row.node, progress.remaining, progress.budgets, self._now())

    # --- plumbing ---------------------------------------------------------------------------

    def _send(self, notifications: list[Notification]) -> None:
        if not self._leading:
            return
        for notification in notifications:
            self._notifier.notify(notification)

    def _now(self) -> datetime:
        return self._clock.now()

    def _guarded(self, step: Callable[..., None], *args: object) -> None:
        try:
            step(*args)
        except Exception as error:  # notifications must never stop a pass
            if not self._failed_once:
                self._failed_once = True
                self._log.error(
                    "notification.not_made", error=type(error).__name__, reason=str(error)[:300]
                )

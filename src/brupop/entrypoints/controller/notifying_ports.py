"""Decorators of the controller's EventRecorder and metrics that also feed RolloutNotices.

They change nothing of what the wrapped port does (the call goes through first); they only let
the notifications hang on the calls the controller already makes. `wire_notifications` builds
the whole chain for one controller: the webhook notifier, one supervised delivery thread per
webhook (a slow receiver holds up only its own), their counters in the controller's registry,
and the two decorators; the controller's container puts them in place with `notifying_events`,
`notifying_metrics` and `notices_read`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from brupop.adapters.notifications.webhook import WebhookNotifier
from brupop.domain.cluster.objects import ClusterEvent
from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics
from brupop.entrypoints.controller.notification_metrics import PrometheusNotificationCounts
from brupop.entrypoints.controller.notification_settings import NotificationSettings
from brupop.ports.clock import Clock
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics, UpdatePhase
from brupop.ports.monitoring.safety_metrics import SafetyMetrics
from brupop.services.controller.runtime.rollout_notices import RolloutNotices
from brupop.services.controller.service import ControllerService
from brupop.services.runtime.supervisor import Supervisor


class NotifyingEvents:
    """An EventRecorder that also tells RolloutNotices what it recorded."""

    def __init__(self, inner: EventRecorder, notices: RolloutNotices) -> None:
        self._inner = inner
        self._notices = notices

    def record(self, event: ClusterEvent) -> None:
        self._inner.record(event)
        self._notices.event(event)


class NotifyingMetrics:
    """The controller's metrics (RolloutMetrics and SafetyMetrics) that also feed the notices."""

    def __init__(self, inner: PrometheusRolloutMetrics, notices: RolloutNotices) -> None:
        self._inner = inner
        self._notices = notices

    def set_hosts(self, states: Mapping[str, int], versions: Mapping[str, int]) -> None:
        self._inner.set_hosts(states, versions)
        self._notices.hosts(states, versions)

    def set_waiting(self, reasons: Mapping[str, int]) -> None:
        self._inner.set_waiting(reasons)
        self._notices.waiting(reasons)

    def observe_phase(self, phase: UpdatePhase, seconds: float) -> None:
        self._inner.observe_phase(phase, seconds)

    def count_attempt(self) -> None:
        self._inner.count_attempt()

    def count_failure(self, reason: str, state: str) -> None:
        self._inner.count_failure(reason, state)

    def set_leader(self, leading: bool) -> None:
        self._inner.set_leader(leading)
        self._notices.leader(leading)

    def set_budgets_in_use(self, in_use: Mapping[tuple[str, str], int]) -> None:
        self._inner.set_budgets_in_use(in_use)

    def set_concurrency_limit(self, maximum: int | None) -> None:
        self._inner.set_concurrency_limit(maximum)

    def set_expected_update(self, seconds: int) -> None:
        self._inner.set_expected_update(seconds)

    def count_pass_failure(self) -> None:
        self._inner.count_pass_failure()

    def observe_pass_cpu(self, seconds: float) -> None:
        self._inner.observe_pass_cpu(seconds)

    def set_fleet_paused(self, paused: bool) -> None:
        self._inner.set_fleet_paused(paused)
        self._notices.fleet(paused=paused)

    def set_fleet(self, *, paused: bool, halted: bool) -> None:
        self._inner.set_fleet(paused=paused, halted=halted)
        self._notices.fleet(paused=paused, halted=halted)

    def observe_health_gate(self, seconds: float) -> None:
        self._inner.observe_health_gate(seconds)

    def count_health_gate_failure(self, check: str) -> None:
        self._inner.count_health_gate_failure(check)


_rollout: type[RolloutMetrics] = NotifyingMetrics
_safety: type[SafetyMetrics] = NotifyingMetrics
_events: type[EventRecorder] = NotifyingEvents


@dataclass
class NotificationWiring:
    """What the controller is built with when webhooks are configured."""

    events: NotifyingEvents
    metrics: NotifyingMetrics
    notices: RolloutNotices
    notifier: WebhookNotifier
    stop: threading.Event
    deliveries: tuple[Supervisor, ...]

    def close(self, flush_seconds: float = 0.0) -> None:
        """Give queued messages up to `flush_seconds`, then end the delivery threads."""
        if flush_seconds > 0:
            self.notifier.wait_delivered(flush_seconds)
        self.stop.set()


def wire_notifications(
    settings: NotificationSettings,
    *,
    events: EventRecorder,
    metrics: PrometheusRolloutMetrics,
    registry: CollectorRegistry,
    pods: PodRepository,
    clock: Clock,
) -> NotificationWiring | None:
    """The notification chain, its delivery threads started; None when no webhook is set."""
    if not settings.targets:
        return None
    stop = threading.Event()
    counts = PrometheusNotificationCounts(registry, (t.name for t in settings.targets))
    notifier = WebhookNotifier(
        settings.targets, settings.cluster_name, counts, stop, settings.delivery
    )
    notices = RolloutNotices(notifier, clock, pods)
    deliveries = tuple(Supervisor(lane.name, lane.deliver, stop) for lane in notifier.lanes)
    for delivery in deliveries:
        delivery.start()
    return NotificationWiring(
        NotifyingEvents(events, notices),
        NotifyingMetrics(metrics, notices),
        notices,
        notifier,
        stop,
        deliveries,
    )


def notifying_events(events: EventRecorder, wiring: NotificationWiring | None) -> EventRecorder:
    """The Events the controller records: the cluster's, also feeding the notices when a
    webhook is set."""
    return wiring.events if wiring is not None else events


def notifying_metrics(
    wiring: NotificationWiring | None, metrics: PrometheusRolloutMetrics
) -> NotifyingMetrics | PrometheusRolloutMetrics:
    """The metrics the controller reports to: its collectors, also feeding the notices when a
    webhook is set."""
    return wiring.metrics if wiring is not None else metrics


def notices_read(
    service: ControllerService, wiring: NotificationWiring | None
) -> ControllerService:
    """`service`, its node reports read by the notices (when a webhook is set)."""
    if wiring is not None:
        wiring.notices.read_reports_from(service.reports)
    return service

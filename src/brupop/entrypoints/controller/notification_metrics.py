"""PrometheusNotificationCounts: the NotificationCounts port in the controller's registry.

`brupop_notifications_sent_total` and `brupop_notifications_dropped_total{reason}` (queue_full,
refused, undeliverable).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from brupop.ports.notifier import NotificationCounts

DROP_REASONS = ("queue_full", "refused", "undeliverable")


class PrometheusNotificationCounts:
    """Sent and dropped notifications."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._sent = Counter(
            "brupop_notifications_sent",
            "Notifications a webhook accepted (2xx).",
            registry=registry,
        )
        self._dropped = Counter(
            "brupop_notifications_dropped",
            "Notifications given up, by reason (queue_full, refused, undeliverable).",
            ["reason"],
            registry=registry,
        )
        for reason in DROP_REASONS:  # present at 0, so an alert can use rate() from the start
            self._dropped.labels(reason=reason)

    def count_sent(self) -> None:
        self._sent.inc()

    def count_dropped(self, reason: str) -> None:
        self._dropped.labels(reason=reason).inc()


_: type[NotificationCounts] = PrometheusNotificationCounts

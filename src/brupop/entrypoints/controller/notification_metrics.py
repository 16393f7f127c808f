"""PrometheusNotificationCounts: the NotificationCounts port in the controller's registry.

`brupop_notifications_sent_total{webhook}` and
`brupop_notifications_dropped_total{webhook,reason}` (queue_full, refused, undeliverable), by
the webhook's name (`webhook-<n>`, never its URL, which may hold a secret): at most
MAX_WEBHOOKS x 3 drop series, each present at 0 from the start.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter

from brupop.ports.monitoring.notifier import NotificationCounts

DROP_REASONS = ("queue_full", "refused", "undeliverable")


class PrometheusNotificationCounts:
    """Sent and dropped notifications, per webhook."""

    def __init__(self, registry: CollectorRegistry, webhooks: Iterable[str] = ()) -> None:
        self._sent = Counter(
            "brupop_notifications_sent",
            "Notifications a webhook accepted (2xx), by webhook.",
            ["webhook"],
            registry=registry,
        )
        self._dropped = Counter(
            "brupop_notifications_dropped",
            "Notifications given up, by webhook and reason (queue_full, refused, undeliverable).",
            ["webhook", "reason"],
            registry=registry,
        )
        for webhook in webhooks:  # present at 0, so an alert can use rate() from the start
            self._sent.labels(webhook=webhook)
            for reason in DROP_REASONS:
                self._dropped.labels(webhook=webhook, reason=reason)

    def count_sent(self, webhook: str) -> None:
        self._sent.labels(webhook=webhook).inc()

    def count_dropped(self, webhook: str, reason: str) -> None:
        self._dropped.labels(webhook=webhook, reason=reason).inc()


_: type[NotificationCounts] = PrometheusNotificationCounts

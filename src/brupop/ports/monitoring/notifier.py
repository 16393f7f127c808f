"""Notifier: where the controller hands the notifications of a rollout (webhooks, a chat).

`notify` only queues: delivery happens elsewhere (off the controller's loop), so a slow or dead
receiver can never hold up a pass. NotificationCounts is what delivery reports back.
"""

from __future__ import annotations

from typing import Protocol

from brupop.domain.reporting.notifications import Notification


class Notifier(Protocol):
    """Accept one notification for delivery; never blocks, never raises."""

    def notify(self, notification: Notification) -> None:
        """Queue `notification` for every receiver that wants its kind (or count it dropped)."""
        ...


class NotificationCounts(Protocol):
    """Counters of delivery; every call is cheap and never raises."""

    def count_sent(self, webhook: str) -> None:
        """One message reached the receiver named `webhook` (a 2xx answer)."""
        ...

    def count_dropped(self, webhook: str, reason: str) -> None:
        """One message to `webhook` was given up: `queue_full`, `refused` (4xx) or
        `undeliverable`."""
        ...

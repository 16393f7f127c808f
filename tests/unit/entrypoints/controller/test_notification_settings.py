"""The notification settings read from an environment: webhooks by number, formats, events."""

from __future__ import annotations

from brupop.domain.reporting.notification_formats import NotificationFormat
from brupop.domain.reporting.notifications import NotificationKind
from brupop.entrypoints.controller.notification_settings import load_notification_settings


def test_no_webhook_means_no_target_and_default_bounds() -> None:
    settings = load_notification_settings({})
    assert settings.targets == ()
    assert settings.cluster_name == ""
    assert (settings.delivery.queue_size, settings.delivery.attempts) == (256, 4)


def test_numbered_webhooks_are_read_with_their_format_and_events() -> None:
    settings = load_notification_settings(
        {
            "CLUSTER_NAME": "prod-eu",
            "NOTIFICATION_WEBHOOK_1_URL": "https://hooks.example/a",
            "NOTIFICATION_WEBHOOK_2_URL": "http://receiver.tools:8080/b?x=1",
            "NOTIFICATION_WEBHOOK_2_FORMAT": "SLACK",
            "NOTIFICATION_WEBHOOK_2_EVENTS": "node_failed, fleet_halted",
            "NOTIFICATION_TIMEOUT_SECONDS": "2.5",
        }
    )
    first, second = settings.targets
    assert settings.cluster_name == "prod-eu"
    assert (first.name, first.format, first.kinds) == (
        "webhook-1",
        NotificationFormat.JSON,
        frozenset(NotificationKind),
    )
    assert second.format is NotificationFormat.SLACK
    assert second.kinds == {NotificationKind.NODE_FAILED, NotificationKind.FLEET_HALTED}
    assert settings.delivery.timeout_seconds == 2.5


def test_an_empty_url_leaves_that_webhook_out() -> None:
    assert load_notification_settings({"NOTIFICATION_WEBHOOK_1_URL": ""}).targets == ()

"""WebhookNotifier against a receiver on loopback: delivery, retries with backoff, drops counted
(receiver down, slow, answering 500 or 400), and a `notify` that never waits."""

from __future__ import annotations

import socket
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from brupop.adapters.notifications.webhook import DeliveryPolicy, WebhookNotifier, WebhookTarget
from brupop.domain.reporting.notification_formats import NotificationFormat
from brupop.domain.reporting.notifications import Notification, NotificationKind
from brupop.services.supervisor import Supervisor
from tests.support.webhook_receiver import Receiver, running_receiver, validate_v1

NOTE = Notification(NotificationKind.FLEET_PAUSED, datetime(2026, 3, 1, tzinfo=UTC), "paused")
FAST_RETRIES = DeliveryPolicy(
    queue_size=8, timeout_seconds=5.0, attempts=3, first_retry_seconds=0.01, max_retry_seconds=0.05
)


class Counts:
    """The NotificationCounts port, counting in memory."""

    def __init__(self) -> None:
        self.sent = 0
        self.dropped: Counter[str] = Counter()
        self.changed = threading.Condition()

    def count_sent(self) -> None:
        with self.changed:
            self.sent += 1
            self.changed.notify_all()

    def count_dropped(self, reason: str) -> None:
        with self.changed:
            self.dropped[reason] += 1
            self.changed.notify_all()

    def wait_for(self, sent: int = 0, dropped: int = 0, seconds: float = 30.0) -> bool:
        with self.changed:
            return self.changed.wait_for(
                lambda: self.sent >= sent and sum(self.dropped.values()) >= dropped, seconds
            )


@contextmanager
def _delivering(
    url: str,
    policy: DeliveryPolicy = FAST_RETRIES,
    form: NotificationFormat = NotificationFormat.JSON,
    kinds: frozenset[NotificationKind] = frozenset(NotificationKind),
    start: bool = True,
) -> Iterator[tuple[WebhookNotifier, Counts]]:
    stop = threading.Event()
    counts = Counts()
    notifier = WebhookNotifier(
        [WebhookTarget("webhook-1", url, form, kinds)], "test-cluster", counts, stop, policy
    )
    if start:
        Supervisor("notification-delivery", notifier.deliver, stop).start()
    try:
        yield notifier, counts
    finally:
        stop.set()


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


def test_a_notification_reaches_the_receiver_in_the_documented_json_format() -> None:
    with running_receiver() as receiver, _delivering(receiver.url) as (notifier, counts):
        notifier.notify(NOTE)
        assert counts.wait_for(sent=1)
    assert len(receiver.bodies) == 1
    validate_v1(receiver.bodies[0])
    assert receiver.bodies[0]["cluster"] == "test-cluster"


def test_a_slack_webhook_gets_an_incoming_webhook_message() -> None:
    with (
        running_receiver() as receiver,
        _delivering(receiver.url, form=NotificationFormat.SLACK) as (notifier, counts),
    ):
        notifier.notify(NOTE)
        assert counts.wait_for(sent=1)
    assert set(receiver.bodies[0]) == {"text"}
    assert "test-cluster" in receiver.bodies[0]["text"]


def test_a_webhook_gets_only_the_events_it_subscribed_to() -> None:
    kinds = frozenset({NotificationKind.NODE_FAILED})
    with running_receiver() as receiver, _delivering(receiver.url, kinds=kinds) as (notifier, c):
        notifier.notify(NOTE)
        notifier.notify(Notification(NotificationKind.NODE_FAILED, NOTE.at, "x", node="n"))
        assert c.wait_for(sent=1)
        assert notifier.wait_delivered(10)
    assert [b["kind"] for b in receiver.bodies] == ["node_failed"]


def test_a_receiver_answering_500_is_retried_and_then_accepted() -> None:
    with (
        running_receiver(Receiver(answers=[500, 503])) as receiver,
        _delivering(receiver.url) as (notifier, counts),
    ):
        notifier.notify(NOTE)
        assert counts.wait_for(sent=1)
    assert receiver.requests == 3
    assert counts.dropped == Counter()


def test_a_receiver_that_keeps_answering_500_gets_every_attempt_then_the_message_is_dropped() -> (
    None
):
    with (
        running_receiver(Receiver(default_status=500)) as receiver,
        _delivering(receiver.url) as (notifier, counts),
    ):
        notifier.notify(NOTE)
        assert counts.wait_for(dropped=1)
    assert receiver.requests == FAST_RETRIES.attempts
    assert counts.dropped == Counter({"undeliverable": 1})
    assert counts.sent == 0


def test_a_receiver_refusing_with_400_is_not_retried() -> None:
    with (
        running_receiver(Receiver(default_status=400)) as receiver,
        _delivering(receiver.url) as (notifier, counts),
    ):
        notifier.notify(NOTE)
        assert counts.wait_for(dropped=1)
    assert receiver.requests == 1
    assert counts.dropped == Counter({"refused": 1})


def test_a_receiver_that_is_down_costs_the_attempts_then_a_counted_drop() -> None:
    with _delivering(_closed_port_url()) as (notifier, counts):
        notifier.notify(NOTE)
        assert counts.wait_for(dropped=1)
    assert counts.dropped == Counter({"undeliverable": 1})


def test_a_slow_receiver_times_out_each_attempt_and_the_message_is_dropped() -> None:
    slow = Receiver(hold=threading.Event())  # never answers until the test ends
    policy = DeliveryPolicy(queue_size=8, timeout_seconds=0.2, attempts=2, first_retry_seconds=0.01)
    with running_receiver(slow) as receiver, _delivering(receiver.url, policy) as (notifier, c):
        notifier.notify(NOTE)
        assert c.wait_for(dropped=1)
    assert c.dropped == Counter({"undeliverable": 1})


def test_notify_never_waits_a_full_queue_drops_and_counts() -> None:
    policy = DeliveryPolicy(queue_size=2, attempts=1)
    # No delivery thread at all: nothing leaves the queue, as with a receiver that hangs.
    with _delivering(_closed_port_url(), policy, start=False) as (notifier, counts):
        for _ in range(5):
            notifier.notify(NOTE)
        assert notifier.pending() == 2
    assert counts.dropped == Counter({"queue_full": 3})

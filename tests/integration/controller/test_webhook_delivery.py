"""WebhookNotifier against receivers on loopback: delivery, retries with backoff, drops counted
per webhook (receiver down, slow, answering 500 or 400), a deadline for each whole exchange, a
slow webhook that delays only itself, and a `notify` that never waits."""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime

from brupop.adapters.notifications.webhook import DeliveryBounds, WebhookNotifier, WebhookTarget
from brupop.domain.reporting.notification_formats import NotificationFormat
from brupop.domain.reporting.notifications import Notification, NotificationKind
from brupop.services.runtime.supervisor import Supervisor
from tests.support.polling import wait_until
from tests.support.webhook_receiver import (
    Receiver,
    dripping_receiver,
    running_receiver,
    validate_v1,
)

NOTE = Notification(NotificationKind.FLEET_PAUSED, datetime(2026, 3, 1, tzinfo=UTC), "paused")
FAST_RETRIES = DeliveryBounds(
    queue_size=8, timeout_seconds=5.0, attempts=3, first_retry_seconds=0.01, max_retry_seconds=0.05
)


class Counts:
    """The NotificationCounts port, counting in memory (`sent` and `dropped` over every webhook,
    `by_webhook` each one's)."""

    def __init__(self) -> None:
        self.sent = 0
        self.dropped: Counter[str] = Counter()
        self.by_webhook: Counter[tuple[str, str]] = Counter()
        self.changed = threading.Condition()

    def count_sent(self, webhook: str) -> None:
        with self.changed:
            self.sent += 1
            self.by_webhook[webhook, "sent"] += 1
            self.changed.notify_all()

    def count_dropped(self, webhook: str, reason: str) -> None:
        with self.changed:
            self.dropped[reason] += 1
            self.by_webhook[webhook, reason] += 1
            self.changed.notify_all()

    def wait_for(self, sent: int = 0, dropped: int = 0, seconds: float = 30.0) -> bool:
        with self.changed:
            return self.changed.wait_for(
                lambda: self.sent >= sent and sum(self.dropped.values()) >= dropped, seconds
            )

    def dropped_by(self, webhook: str) -> int:
        with self.changed:
            return (
                sum(n for (name, what), n in self.by_webhook.items() if name == webhook)
                - (self.by_webhook[webhook, "sent"])
            )


@contextmanager
def _delivering(
    url: str,
    bounds: DeliveryBounds = FAST_RETRIES,
    form: NotificationFormat = NotificationFormat.JSON,
    kinds: frozenset[NotificationKind] = frozenset(NotificationKind),
    start: bool = True,
) -> Iterator[tuple[WebhookNotifier, Counts]]:
    with _delivering_to([WebhookTarget("webhook-1", url, form, kinds)], bounds, start) as both:
        yield both


@contextmanager
def _delivering_to(
    targets: list[WebhookTarget], bounds: DeliveryBounds = FAST_RETRIES, start: bool = True
) -> Iterator[tuple[WebhookNotifier, Counts]]:
    stop = threading.Event()
    counts = Counts()
    notifier = WebhookNotifier(targets, "test-cluster", counts, stop, bounds)
    if start:
        for lane in notifier.lanes:
            Supervisor(lane.name, lane.deliver, stop).start()
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
    bounds = DeliveryBounds(queue_size=8, timeout_seconds=0.2, attempts=2, first_retry_seconds=0.01)
    with running_receiver(slow) as receiver, _delivering(receiver.url, bounds) as (notifier, c):
        notifier.notify(NOTE)
        assert c.wait_for(dropped=1)
    assert c.dropped == Counter({"undeliverable": 1})


def test_notify_never_waits_a_full_queue_drops_and_counts() -> None:
    bounds = DeliveryBounds(queue_size=2, attempts=1)
    # No delivery thread at all: nothing leaves the queue, as with a receiver that hangs.
    with _delivering(_closed_port_url(), bounds, start=False) as (notifier, counts):
        for _ in range(5):
            notifier.notify(NOTE)
        assert notifier.pending() == 2
    assert counts.dropped == Counter({"queue_full": 3})


def test_a_receiver_that_drips_its_headers_is_cut_at_the_deadline_of_the_whole_exchange() -> None:
    # The drip never ends its answer and each read gets a byte in time: only the deadline of
    # the whole exchange can end it, and not before that deadline.
    bounds = DeliveryBounds(queue_size=8, timeout_seconds=1.0, attempts=1)
    with dripping_receiver() as drip, _delivering(drip.url, bounds) as (notifier, counts):
        began = time.monotonic()
        notifier.notify(NOTE)
        assert counts.wait_for(dropped=1, seconds=60)
        took = time.monotonic() - began
        assert drip.connections == 1
    assert took >= bounds.timeout_seconds, f"the exchange ended {took:.2f} s after it began"
    assert counts.dropped == Counter({"undeliverable": 1})


def test_a_slow_webhook_delays_only_itself_and_what_it_drops_is_counted_as_its_own() -> None:
    # The slow webhook's first exchange lasts 30 s unless its receiver hangs up first.
    bounds = DeliveryBounds(queue_size=3, timeout_seconds=30.0, attempts=1)
    with ExitStack() as slow:
        drip = slow.enter_context(dripping_receiver())
        with (
            running_receiver() as healthy,
            _delivering_to(
                [WebhookTarget("webhook-1", drip.url), WebhookTarget("webhook-2", healthy.url)],
                bounds,
            ) as (notifier, counts),
        ):
            for _ in range(3):
                notifier.notify(NOTE)
            assert healthy.wait_for(lambda r: len(r.bodies) == 3, seconds=20)
            # All three reached the healthy webhook while the slow one still held its first (its
            # worker may connect after them on a loaded machine: that is waited for, not raced).
            wait_until(lambda: drip.connections >= 1, "the slow webhook's first exchange")
            assert (drip.connections, counts.dropped_by("webhook-1")) == (1, 0)
            slow.close()  # the slow receiver hangs up: its exchanges end now
            assert notifier.wait_delivered(15)
    assert counts.by_webhook["webhook-2", "sent"] == 3
    assert counts.dropped_by("webhook-2") == 0
    assert counts.by_webhook["webhook-1", "sent"] == 0
    assert counts.dropped_by("webhook-1") == 3, counts.by_webhook
    assert counts.by_webhook["webhook-1", "undeliverable"] >= 1

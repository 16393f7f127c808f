"""A webhook's retries wait the one Backoff's waits: doubling from `first_retry_seconds` up to
`max_retry_seconds`, as tenacity's `wait_exponential` waited before."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from tenacity import RetryCallState, Retrying, wait_exponential

from brupop.adapters.notifications import webhook
from brupop.adapters.notifications.exchange import ExchangeError
from brupop.adapters.notifications.webhook import DeliveryBounds, WebhookLane, WebhookTarget
from brupop.domain.reporting.notifications import Notification, NotificationKind
from tests.support.polling import wait_until

NOTE = Notification(NotificationKind.FLEET_PAUSED, datetime(2026, 3, 1, tzinfo=UTC), "paused")


class Drops:
    """The NotificationCounts port, remembering why messages were dropped."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def count_sent(self, webhook: str) -> None:
        raise AssertionError("nothing can be sent: every exchange fails")

    def count_dropped(self, webhook: str, reason: str) -> None:
        self.reasons.append(reason)


@pytest.mark.parametrize(
    "bounds",
    [DeliveryBounds(), DeliveryBounds(first_retry_seconds=0.01, max_retry_seconds=0.05)],
)
def test_each_wait_is_the_one_tenacity_waited_before(bounds: DeliveryBounds) -> None:
    before = wait_exponential(multiplier=bounds.first_retry_seconds, max=bounds.max_retry_seconds)
    for tries in range(1, 40):
        state = RetryCallState(Retrying(), fn=None, args=(), kwargs={})
        state.attempt_number = tries
        assert bounds.retry_wait(tries) == before(state)


def test_a_failing_webhook_pauses_the_doubling_waits_between_its_tries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreachable(*_: object) -> int:
        raise ExchangeError("connection refused")

    pauses: list[float] = []
    monkeypatch.setattr(webhook, "post_within", unreachable)
    monkeypatch.setattr(WebhookLane, "_pause", lambda _lane, seconds: pauses.append(seconds))
    bounds = DeliveryBounds(attempts=6, first_retry_seconds=1.0, max_retry_seconds=5.0)
    drops, stop = Drops(), threading.Event()
    lane = WebhookLane(WebhookTarget("hook", "http://unreachable"), "c", drops, stop, bounds)
    lane.offer(NOTE)
    worker = threading.Thread(target=lane.deliver, daemon=True)
    worker.start()
    try:
        wait_until(lambda: drops.reasons, "the message dropped")
    finally:
        stop.set()
        worker.join()

    assert drops.reasons == ["undeliverable"]
    assert pauses == [1.0, 2.0, 4.0, 5.0, 5.0]

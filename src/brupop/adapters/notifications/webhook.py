"""WebhookNotifier: the Notifier port over HTTP POSTs of JSON, one bounded queue and worker per
webhook.

`notify` puts the message on the queue of each interested webhook and returns at once; a full
queue drops the message and counts it (`queue_full`, for that webhook). Each webhook's `lane`
has its own worker (`WebhookLane.deliver`, the body of a supervised daemon thread), so a slow
or dead receiver delays only its own messages. Each attempt is one exchange under a wall-clock
deadline (`timeout_seconds`: connect, send, headers and body together, see `exchange`). A
connection error, the deadline, a 429 or a 5xx is retried after the waits of the one `Backoff`
(doubling from `first_retry_seconds` up to `max_retry_seconds`) up to `attempts` tries, then
dropped (`undeliverable`); any other 4xx is dropped at once (`refused`): the same body would be
refused again.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

import structlog
from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_when_event_set,
)

from brupop.adapters.notifications.exchange import ExchangeError, post_within
from brupop.domain.reporting.notification_formats import NotificationFormat, render
from brupop.domain.reporting.notifications import Notification, NotificationKind
from brupop.domain.retry_backoff import Backoff
from brupop.ports.monitoring.notifier import NotificationCounts

_IDLE_WAIT_SECONDS = 0.5
_HEADERS = {"Content-Type": "application/json", "User-Agent": "brupop-controller"}
log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class WebhookTarget:
    """One receiver: where, in which format, for which events; `name` is what logs and metrics
    show (the URL may hold a secret)."""

    name: str
    url: str
    format: NotificationFormat = NotificationFormat.JSON
    kinds: frozenset[NotificationKind] = frozenset(NotificationKind)


@dataclass(frozen=True)
class DeliveryBounds:
    """Bounds of delivery: queue size (per webhook), the deadline of one whole exchange, tries
    and their backoff."""

    queue_size: int = 256
    timeout_seconds: float = 5.0
    attempts: int = 4
    first_retry_seconds: float = 1.0
    max_retry_seconds: float = 30.0

    def retry_wait(self, tries: int) -> float:
        """The pause after `tries` failed tries (1: `first_retry_seconds`), doubling to the cap."""
        return Backoff(self.first_retry_seconds, self.max_retry_seconds).delay(tries)


class RetryableDelivery(Exception):
    """The receiver may take it later (no connection, timeout, 429, 5xx)."""


class RefusedDelivery(Exception):
    """The receiver will not take it (any other non-2xx)."""


class WebhookNotifier:
    """Hands each notification to the lanes of the webhooks that want it."""

    def __init__(
        self,
        targets: Iterable[WebhookTarget],
        cluster: str,
        counts: NotificationCounts,
        stop: threading.Event,
        bounds: DeliveryBounds | None = None,
    ) -> None:
        chosen = bounds or DeliveryBounds()
        self.lanes = tuple(WebhookLane(target, cluster, counts, stop, chosen) for target in targets)

    def notify(self, notification: Notification) -> None:
        for lane in self.lanes:
            lane.offer(notification)

    def pending(self) -> int:
        """Messages queued or being delivered, over every webhook."""
        return sum(lane.pending() for lane in self.lanes)

    def wait_delivered(self, seconds: float) -> bool:
        """Wait up to `seconds` for every queue to empty (at the end of a simulation)."""
        deadline = time.monotonic() + seconds
        return all(lane.wait_delivered(deadline - time.monotonic()) for lane in self.lanes)


class WebhookLane:
    """One webhook's bounded queue and its worker: a slow receiver delays only itself."""

    def __init__(
        self,
        target: WebhookTarget,
        cluster: str,
        counts: NotificationCounts,
        stop: threading.Event,
        bounds: DeliveryBounds,
    ) -> None:
        self.target = target
        self.name = f"notify-{target.name}"
        self._cluster, self._counts, self._stop, self._bounds = cluster, counts, stop, bounds
        self._queue: queue.Queue[Notification] = queue.Queue(bounds.queue_size)

    def offer(self, notification: Notification) -> None:
        """Queue `notification` if this webhook wants its kind; never waits."""
        if notification.kind not in self.target.kinds:
            return
        try:
            self._queue.put_nowait(notification)
        except queue.Full:
            self._counts.count_dropped(self.target.name, "queue_full")

    def pending(self) -> int:
        """Messages queued or being delivered."""
        return self._queue.unfinished_tasks

    def wait_delivered(self, seconds: float) -> bool:
        """Wait up to `seconds` for the queue to empty."""
        deadline = time.monotonic() + seconds
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._queue.all_tasks_done.wait(left)
        return True

    def deliver(self) -> None:
        """Deliver queued messages until `stop` is set (the worker thread's body)."""
        while not self._stop.is_set():
            try:
                notification = self._queue.get(timeout=_IDLE_WAIT_SECONDS)
            except queue.Empty:
                continue
            try:
                self._deliver_one(notification)
            finally:
                self._queue.task_done()

    def _deliver_one(self, notification: Notification) -> None:
        body = json.dumps(render(self.target.format, notification, self._cluster)).encode()
        bounds = self._bounds
        retrying = Retrying(
            stop=stop_after_attempt(bounds.attempts) | stop_when_event_set(self._stop),
            wait=self._retry_wait,
            retry=retry_if_exception_type(RetryableDelivery),
            sleep=self._pause,
        )
        try:
            retrying(self._post, body)
        except RefusedDelivery as error:
            self._dropped(notification, "refused", str(error))
        except RetryError as error:
            self._dropped(notification, "undeliverable", str(error.last_attempt.exception()))
        else:
            self._counts.count_sent(self.target.name)

    def _retry_wait(self, state: RetryCallState) -> float:
        return self._bounds.retry_wait(state.attempt_number)

    def _pause(self, seconds: float) -> None:
        """Backoff between tries, cut short by a stop (which then also ends the tries)."""
        self._stop.wait(seconds)

    def _dropped(self, note: Notification, why: str, error: str) -> None:
        self._counts.count_dropped(self.target.name, why)
        log.warning(
            "notification.dropped",
            webhook=self.target.name,
            kind=note.kind.value,
            why=why,
            error=error,
        )

    def _post(self, body: bytes) -> None:
        try:
            status = post_within(self.target.url, body, _HEADERS, self._bounds.timeout_seconds)
        except ExchangeError as error:
            raise RetryableDelivery(str(error)) from error
        if 200 <= status < 300:
            return
        if status == 429 or status >= 500:
            raise RetryableDelivery(f"HTTP {status}")
        raise RefusedDelivery(f"HTTP {status}")

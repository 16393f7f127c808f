"""WebhookNotifier: the Notifier port over HTTP POSTs of JSON, delivered from a bounded queue.

`notify` puts one message per interested webhook on a queue and returns at once; a full queue
drops the message and counts it (`queue_full`). `deliver` (the body of a supervised daemon
thread) takes messages off the queue and POSTs them with a timeout per attempt, reading at most
`RESPONSE_LIMIT` bytes of the answer. A connection error, a timeout, a 429 or a 5xx is retried
with exponential backoff (tenacity) up to `attempts` tries, then dropped (`undeliverable`);
any other 4xx is dropped at once (`refused`): the same body would be refused again.
"""

from __future__ import annotations

import http.client
import json
import queue
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import structlog
from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_when_event_set,
    wait_exponential,
)

from brupop.domain.reporting.notification_formats import NotificationFormat, render
from brupop.domain.reporting.notifications import Notification, NotificationKind
from brupop.ports.notifier import NotificationCounts

RESPONSE_LIMIT = 4096
_IDLE_WAIT_SECONDS = 0.5
log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class WebhookTarget:
    """One receiver: where, in which format, for which events; `name` is what logs show (the
    URL may hold a secret)."""

    name: str
    url: str
    format: NotificationFormat = NotificationFormat.JSON
    kinds: frozenset[NotificationKind] = frozenset(NotificationKind)


@dataclass(frozen=True)
class DeliveryPolicy:
    """Bounds of delivery: queue size, per-attempt timeout, tries and their backoff."""

    queue_size: int = 256
    timeout_seconds: float = 5.0
    attempts: int = 4
    first_retry_seconds: float = 1.0
    max_retry_seconds: float = 30.0


class RetryableDelivery(Exception):
    """The receiver may take it later (no connection, timeout, 429, 5xx)."""


class RefusedDelivery(Exception):
    """The receiver will not take it (any other non-2xx)."""


class WebhookNotifier:
    """Queues notifications and delivers them to the webhooks that want them."""

    def __init__(
        self,
        targets: Iterable[WebhookTarget],
        cluster: str,
        counts: NotificationCounts,
        stop: threading.Event,
        policy: DeliveryPolicy | None = None,
    ) -> None:
        self._targets = tuple(targets)
        self._cluster = cluster
        self._counts = counts
        self._stop = stop
        self._policy = policy or DeliveryPolicy()
        self._queue: queue.Queue[tuple[WebhookTarget, Notification]] = queue.Queue(
            self._policy.queue_size
        )

    def notify(self, notification: Notification) -> None:
        for target in self._targets:
            if notification.kind not in target.kinds:
                continue
            try:
                self._queue.put_nowait((target, notification))
            except queue.Full:
                self._counts.count_dropped("queue_full")

    def pending(self) -> int:
        """Messages queued or being delivered."""
        return self._queue.unfinished_tasks

    def wait_delivered(self, seconds: float) -> bool:
        """Wait up to `seconds` for the queue to empty (at the end of a simulation)."""
        deadline = time.monotonic() + seconds
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._queue.all_tasks_done.wait(left)
        return True

    def deliver(self) -> None:
        """Deliver queued messages until `stop` is set (the delivery thread's body)."""
        while not self._stop.is_set():
            try:
                target, notification = self._queue.get(timeout=_IDLE_WAIT_SECONDS)
            except queue.Empty:
                continue
            try:
                self._deliver_one(target, notification)
            finally:
                self._queue.task_done()

    def _deliver_one(self, target: WebhookTarget, notification: Notification) -> None:
        body = json.dumps(render(target.format, notification, self._cluster)).encode()
        policy = self._policy
        retrying = Retrying(
            stop=stop_after_attempt(policy.attempts) | stop_when_event_set(self._stop),
            wait=wait_exponential(
                multiplier=policy.first_retry_seconds, max=policy.max_retry_seconds
            ),
            retry=retry_if_exception_type(RetryableDelivery),
            sleep=self._pause,
        )
        try:
            retrying(self._post, target.url, body)
        except RefusedDelivery as error:
            self._dropped(target, notification, "refused", str(error))
        except RetryError as error:
            self._dropped(
                target, notification, "undeliverable", str(error.last_attempt.exception())
            )
        else:
            self._counts.count_sent()

    def _pause(self, seconds: float) -> None:
        """Backoff between tries, cut short by a stop (which then also ends the tries)."""
        self._stop.wait(seconds)

    def _dropped(self, target: WebhookTarget, note: Notification, why: str, error: str) -> None:
        self._counts.count_dropped(why)
        log.warning(
            "notification.dropped", webhook=target.name, kind=note.kind.value, why=why, error=error
        )

    def _post(self, url: str, body: bytes) -> None:
        parts = urlsplit(url)
        timeout = self._policy.timeout_seconds
        host, port = parts.hostname or "", parts.port
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(host, port, timeout=timeout)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=timeout)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {"Content-Type": "application/json", "User-Agent": "brupop-controller"}
        try:
            connection.request("POST", path, body, headers)
            response = connection.getresponse()
            response.read(RESPONSE_LIMIT)  # a bounded look: receivers answer "ok" or similar
            status = response.status
        except (OSError, http.client.HTTPException) as error:
            raise RetryableDelivery(f"{type(error).__name__}: {error}") from error
        finally:
            connection.close()
        if 200 <= status < 300:
            return
        if status == 429 or status >= 500:
            raise RetryableDelivery(f"HTTP {status}")
        raise RefusedDelivery(f"HTTP {status}")

"""Supervisor: keeps a background loop (a watch) running whatever it raises.

The loops catch the errors they expect (a cluster that cannot be reached, an expired watch).
Anything else would end their thread without a word and leave the process degraded, so the
supervisor catches it, logs it once per failure streak (one ERROR line with the exception's
type and message, never a traceback: the same bug would repeat it on every restart), and
restarts the loop after a pause that doubles up to a cap. A loop that keeps failing is reported
by `failing`, which the processes' readiness reads. A restart that then runs for
`healthy_after` seconds ends the streak.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from brupop.domain.retry_backoff import Backoff

_MESSAGE_LIMIT = 300


@dataclass(frozen=True)
class RestartSchedule:
    """How long to wait before restart n (1, 2, ...): `first` doubled each time, at most `cap`;
    when a streak counts as `failing`; how long a run must last to end it."""

    first_seconds: float = 1.0
    cap_seconds: float = 30.0
    failing_after: int = 3
    healthy_after: float = 60.0

    def delay(self, failures: int) -> float:
        """The pause before restarting after `failures` failures in a row."""
        return Backoff(self.first_seconds, self.cap_seconds).delay(failures)


class Supervisor:
    """Runs `body` until `stop` is set, restarting it after any exception it lets out.

    `body` returns only once `stop` is set; `run` is the thread's target.
    """

    def __init__(
        self,
        name: str,
        body: Callable[[], None],
        stop: threading.Event,
        *,
        schedule: RestartSchedule | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self._body = body
        self._stop = stop
        self._schedule = schedule or RestartSchedule()
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._failures = 0
        self._running_since: float | None = None
        self._log = structlog.get_logger(__name__).bind(loop=name)

    @property
    def failures(self) -> int:
        """Failures in the current streak (0 when the loop is healthy)."""
        with self._lock:
            return 0 if self._healthy_run() else self._failures

    @property
    def failing(self) -> bool:
        """The loop keeps failing: at least `failing_after` failures in a row, and no run since
        has lasted long enough to end the streak."""
        return self.failures >= self._schedule.failing_after

    def start(self) -> threading.Thread:
        """Run the supervised loop in a daemon thread named after it."""
        thread = threading.Thread(target=self.run, name=self.name, daemon=True)
        thread.start()
        return thread

    def run(self) -> None:
        """Run the loop, restarting it after each failure, until `stop` is set."""
        while not self._stop.is_set():
            with self._lock:
                self._running_since = self._monotonic()
            try:
                self._body()
            except Exception as error:  # whatever it is: the supervisor exists to catch it
                self._stop.wait(self._failed(error))
            else:
                return

    def _failed(self, error: Exception) -> float:
        """Count the failure, log the first of its streak, and say how long to pause."""
        with self._lock:
            if self._healthy_run():
                self._failures = 0
            self._failures += 1
            self._running_since = None
            failures = self._failures
        delay = self._schedule.delay(failures)
        fields = {
            "error": type(error).__name__,
            "reason": str(error)[:_MESSAGE_LIMIT],
            "restart_in_seconds": delay,
        }
        if failures == 1:
            self._log.error("loop.failed", **fields)
        else:
            self._log.debug("loop.failed_again", failures=failures, **fields)
        return delay

    def _healthy_run(self) -> bool:
        """The current run has lasted long enough to end a failure streak (lock held)."""
        started = self._running_since
        return started is not None and self._monotonic() - started >= self._schedule.healthy_after

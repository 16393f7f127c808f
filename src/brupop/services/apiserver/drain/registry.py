"""Drains run in the background, one per node; requests join the running drain or read its outcome.

A drain is owned by this registry, not by the HTTP request that asked for it, so a dropped
connection does not stop it and the agent's next request joins it instead of starting another.
The outcome is remembered for a while so a late retry hears how the drain ended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

import structlog

from brupop.ports.clock import Clock
from brupop.ports.errors import DrainFailedError
from brupop.services.apiserver.drain.drainer import DrainReport

log = structlog.get_logger(__name__)

DEFAULT_OUTCOME_SECONDS = 60.0


@dataclass
class _Entry:
    future: Future[DrainReport]
    finished_at: float | None = None


class DrainRegistry:
    """Single-flight drains keyed by node name."""

    def __init__(
        self,
        drain: Callable[[str], DrainReport],
        clock: Clock,
        *,
        outcome_seconds: float = DEFAULT_OUTCOME_SECONDS,
    ) -> None:
        self._drain = drain
        self._clock = clock
        self._outcome_seconds = outcome_seconds
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self.started = 0

    def request(self, node_name: str) -> Future[DrainReport]:
        """The drain of `node_name`: the running one, a recently finished one, or a new one."""
        with self._lock:
            entry = self._entries.get(node_name)
            if entry is not None and self._still_valid(entry):
                return entry.future
            future: Future[DrainReport] = Future()
            future.set_running_or_notify_cancel()
            self._entries[node_name] = _Entry(future)
            self.started += 1
        thread = threading.Thread(
            target=self._run, args=(node_name, future), name=f"drain-{node_name}", daemon=True
        )
        thread.start()
        return future

    def forget(self, node_name: str) -> None:
        """Drop a finished drain's outcome (the node was uncordoned: it is no longer drained)."""
        with self._lock:
            entry = self._entries.get(node_name)
            if entry is not None and entry.future.done():
                del self._entries[node_name]

    def in_progress(self) -> int:
        """How many drains are running now."""
        with self._lock:
            return sum(1 for entry in self._entries.values() if not entry.future.done())

    def _still_valid(self, entry: _Entry) -> bool:
        if entry.finished_at is None:
            return True
        return self._clock.monotonic() - entry.finished_at < self._outcome_seconds

    def _run(self, node_name: str, future: Future[DrainReport]) -> None:
        try:
            report = self._drain(node_name)
        except DrainFailedError as failure:
            self._finish(node_name, future, remember=True)
            future.set_exception(failure)
        except Exception as error:  # every outcome must reach the waiting requests
            log.warning("drain.error", node=node_name, error=str(error), kind=type(error).__name__)
            self._finish(node_name, future, remember=False)
            future.set_exception(error)
        else:
            self._finish(node_name, future, remember=True)
            future.set_result(report)

    def _finish(self, node_name: str, future: Future[DrainReport], *, remember: bool) -> None:
        with self._lock:
            entry = self._entries.get(node_name)
            if entry is None or entry.future is not future:
                return
            if remember:
                entry.finished_at = self._clock.monotonic()
            else:
                del self._entries[node_name]

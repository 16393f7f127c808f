"""The controller's passes over a run, sampled every few seconds from its metrics, so a run in which
it passes many times a second shows when that began, what its CPU did meanwhile and which
watch events kube-apiserver sent around it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from real_cluster import proc_stats, readings, scrape

PASSES = "brupop_controller_pass_cpu_seconds_count"
BURST_PASSES_PER_SECOND = 3.0
"""A window of passes faster than this is a burst (a healthy rollout makes about one a second
at most: a wake, then the loop's settle, then a pass per watched change)."""


class PassTimeline:
    """A thread sampling [seconds since start, passes, controller CPU seconds] every
    `interval`, and every `events_every`-th sample the watch events sent so far by resource."""

    def __init__(
        self,
        port: int,
        pid: int,
        watch_events: Callable[[], dict[tuple[str, ...], float]],
        interval: float = 2.0,
        events_every: int = 3,
    ) -> None:
        self._port, self._pid = port, pid
        self._watch_events = watch_events
        self._interval, self._events_every = interval, events_every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="pass-timeline", daemon=True)
        self.samples: list[list[float]] = []
        self.events: list[tuple[float, dict[str, float]]] = []
        self._began = 0.0

    def start(self) -> None:
        self._began = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _sample(self) -> None:
        count = 0
        while not self._stop.is_set():
            at = round(time.monotonic() - self._began, 1)
            try:
                text = readings.http_text(f"http://127.0.0.1:{self._port}/metrics", seconds=5.0)
                cpu = proc_stats.cpu_seconds(self._pid)
            except OSError:  # the controller is gone (the run is ending)
                return
            self.samples.append([at, scrape.single(text, PASSES), round(cpu, 2)])
            if count % self._events_every == 0:
                try:
                    moved = self._watch_events()
                except Exception:  # a missed reading only thins the timeline
                    moved = {}
                self.events.append((at, {key[0]: value for key, value in moved.items()}))
            count += 1
            self._stop.wait(self._interval)

    def summary(self, window: float = 10.0) -> dict[str, Any]:
        """The busiest `window` of passes (when it began, passes a second, CPU spent), the
        watch events sent over it by resource, and the whole timeline relative to its start."""
        if len(self.samples) < 2:
            return {"samples": self.samples}
        first = self.samples[0]
        best = (0.0, self.samples[0], self.samples[0])
        for index, start in enumerate(self.samples):
            end = next((s for s in self.samples[index:] if s[0] - start[0] >= window), None)
            if end is None:
                break
            rate = (end[1] - start[1]) / (end[0] - start[0])
            if rate > best[0]:
                best = (rate, start, end)
        rate, start, end = best
        return {
            "busiest_window": {
                "began_after_seconds": start[0],
                "seconds": round(end[0] - start[0], 1),
                "passes_per_second": round(rate, 2),
                "controller_cpu_seconds": round(end[2] - start[2], 2),
                "watch_events_by_resource": self._events_between(start[0], end[0]),
            },
            "burst_seconds": self._burst_seconds(),
            "samples_at_seconds_passes_cpu": [
                [s[0], s[1] - first[1], round(s[2] - first[2], 2)] for s in self.samples
            ],
        }

    def _burst_seconds(self) -> float:
        """Seconds of the run spent passing faster than BURST_PASSES_PER_SECOND."""
        total = 0.0
        for before, after in zip(self.samples, self.samples[1:], strict=False):
            span = after[0] - before[0]
            if span > 0 and (after[1] - before[1]) / span > BURST_PASSES_PER_SECOND:
                total += span
        return round(total, 1)

    def _events_between(self, start: float, end: float) -> dict[str, float]:
        """Watch events sent from the last reading at or before `start` to the first at or
        after `end` (the readings are sparser than the samples)."""
        earlier = [moved for at, moved in self.events if at <= start]
        later = [moved for at, moved in self.events if at >= end]
        if not earlier or not later:
            return {}
        before, after = earlier[-1], later[0]
        return {
            resource: value - before.get(resource, 0.0)
            for resource, value in after.items()
            if value - before.get(resource, 0.0)
        }

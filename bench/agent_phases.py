"""Where an agent's CPU goes, by phase: start, host commands, reports, node operations, polls.

A thread reads the agent's exact CPU (`/proc/<pid>/schedstat`), whether it has a child (an
`apiclient` call) running, and the apiserver's count of answered requests by route and method,
every few tens of milliseconds. Each slice's CPU goes to the first phase that fits it:
- start: the process has made no request yet;
- host commands: an `apiclient` child ran at either end of the slice;
- reports: a status write (or the shadow's creation) was answered in it or the slice before;
- node operations: a cordon, drain, uncordon or load-balancer request, likewise;
- polls: a read of the shadow (the long poll) or of the node's uid, likewise;
- between requests: none of these (the loop's timers and its looks for a stop).
The attribution is by time, so a slice holding two things goes to the first that fits; the
slice before counts too because the apiserver counts a request once its answer is sent, and the
agent reads that answer (and sends its next request) a moment later. The meter also notes each
socket the agent opens: a new connection to the apiserver, with its TLS handshake.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from rig import LoopbackApiserver

RESOURCE = "/bottlerocket-node-resource"
PHASES = ("start", "host commands", "reports", "node operations", "polls", "between requests")


def _cpu_ms(pid: int) -> float | None:
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e6
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None


def _sockets(pid: int) -> set[str]:
    """The process's open sockets, by inode (`socket:[123]`)."""
    found = set()
    try:
        for entry in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = str(entry.readlink())
            except OSError:  # closed meanwhile
                continue
            if target.startswith("socket:"):
                found.add(target)
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return found


def _has_child(pid: int) -> bool:
    try:
        return bool(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
    except (FileNotFoundError, ProcessLookupError):
        return False


def _answered(apiserver: LoopbackApiserver) -> dict[str, int]:
    """Requests answered so far, by phase they belong to."""
    counts = dict.fromkeys(("reports", "node operations", "polls"), 0)
    for family in apiserver.metrics.requests.collect():
        for sample in family.samples:
            if not sample.name.endswith("_total"):
                continue
            route, method = sample.labels["route"], sample.labels["method"]
            if route == RESOURCE and method in ("PUT", "POST"):
                counts["reports"] += int(sample.value)
            elif route in (RESOURCE, f"{RESOURCE}/node-uid"):
                counts["polls"] += int(sample.value)
            elif route.startswith(RESOURCE):
                counts["node operations"] += int(sample.value)
    return counts


@dataclass
class _Slice:
    at: float
    phase: str
    cpu_ms: float


@dataclass
class PhaseMeter:
    """Follows one agent process at a time and files its CPU under phases, slice by slice."""

    apiserver: LoopbackApiserver
    interval: float = 0.02
    slices: list[_Slice] = field(default_factory=list)
    sockets_seen: dict[str, float] = field(default_factory=dict)  # inode -> first seen

    def __post_init__(self) -> None:
        self._pid: int | None = None
        self._requested = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="phases", daemon=True)
        self._thread.start()

    def follow(self, pid: int) -> None:
        """Measure process `pid` from now on, as a fresh start."""
        self._pid, self._requested = pid, False

    def between(self, start: float, end: float) -> dict[str, float]:
        """CPU ms per phase over [start, end]."""
        totals = dict.fromkeys(PHASES, 0.0)
        for piece in self.slices:
            if start <= piece.at <= end:
                totals[piece.phase] += piece.cpu_ms
        return {phase: round(ms, 1) for phase, ms in totals.items()}

    def sockets_opened(self, start: float, end: float) -> int:
        """Sockets the agent opened over [start, end] (each a connection and its handshake)."""
        return sum(start <= seen <= end for seen in self.sockets_seen.values())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        pid, cpu, child = None, 0.0, False
        counts = older = _answered(self.apiserver)
        while not self._stop.wait(self.interval):
            now_pid = self._pid
            now_cpu = _cpu_ms(now_pid) if now_pid is not None else None
            now_child = now_pid is not None and _has_child(now_pid)
            now_counts = _answered(self.apiserver)
            if now_pid is not None:
                for inode in _sockets(now_pid):
                    self.sockets_seen.setdefault(f"{now_pid}:{inode}", time.monotonic())
            if now_pid is not None and now_pid == pid and now_cpu is not None:
                phase = self._phase(child or now_child, older, now_counts)
                self.slices.append(_Slice(time.monotonic(), phase, now_cpu - cpu))
            elif now_pid is not None and now_pid != pid and now_cpu is not None:
                # A new process: its CPU so far is start-up.
                self.slices.append(_Slice(time.monotonic(), "start", now_cpu))
            pid, cpu, child = now_pid, now_cpu or 0.0, now_child
            older, counts = counts, now_counts

    def _phase(self, child: bool, before: dict[str, int], after: dict[str, int]) -> str:
        answered = {name: after[name] - before[name] for name in after}
        if not self._requested:
            if not any(answered.values()):
                return "start"
            self._requested = True  # the slice of the first request still counts as start
            return "start"
        if child:
            return "host commands"
        for name in ("reports", "node operations", "polls"):
            if answered[name] > 0:
                return name
        return "between requests"

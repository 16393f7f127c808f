"""Every container run of a namespace's pods on real nodes, sampled once a second for
bench/real_node_phases.py: when it started, its first log line and first status report (the
agent's `status.reported`), CPU throttled in its first minute, memory peak against its limit,
OOM kills, and the phase of the benchmark it started in."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kubernetes import client
from real_node_cgroups import container_figures

FIRST_MINUTE = 60.0
REPORT_EVENTS = ("status.reported", "shadow.created")


@dataclass
class ContainerRun:
    """One start of one container: what the node's log file and cgroups said of it."""

    pod: str
    container: str
    node: str
    pod_uid: str
    container_id: str
    log: Path
    started: datetime
    phase: str
    first_line: datetime | None = None
    first_report: datetime | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    first_minute: dict[str, Any] = field(default_factory=dict)
    ended: str = ""

    def row(self) -> dict[str, Any]:
        limit = self.figures.get("memory_limit_mib")
        return {
            "phase": self.phase,
            "pod": self.pod,
            "container": self.container,
            "node": self.node,
            "started": self.started.isoformat(),
            "start_to_first_line_s": _seconds(self.started, self.first_line),
            "start_to_first_report_s": _seconds(self.started, self.first_report),
            "first_minute_throttled_s": self.first_minute.get("cpu_throttled_seconds"),
            "first_minute_periods_throttled": self.first_minute.get("cfs_periods_throttled"),
            "first_minute_complete": bool(self.first_minute),
            "throttled_s_while_sampled": self.figures.get("cpu_throttled_seconds"),
            "cpu_quota_ms_per_100ms": self.figures.get("cpu_quota_ms_per_100ms"),
            "memory_peak_mib": self.figures.get("memory_peak_mib"),
            "memory_limit_mib": limit,
            "memory_peak_of_limit": self.figures.get("memory_peak_of_limit"),
            "oom_kills": self.figures.get("oom_kills", 0),
            "ended": self.ended,
        }


def _seconds(start: datetime, end: datetime | None) -> float | None:
    return None if end is None else round((end - start).total_seconds(), 2)


def _cri_time(line: str) -> datetime:
    """The timestamp of a CRI log line (nanoseconds cut to microseconds)."""
    stamp = line.split(" ", 1)[0].replace("Z", "")
    head, _, fraction = stamp.partition(".")
    return datetime.fromisoformat(f"{head}.{(fraction + '000000')[:6]}+00:00")


def _event(message: str) -> str:
    try:
        parsed = json.loads(message)
    except ValueError:
        return ""
    return str(parsed.get("event", "")) if isinstance(parsed, dict) else ""


class Sampler:
    """The container runs seen so far; `sample()` once a second."""

    def __init__(self, root: Path, core: client.CoreV1Api, namespace: str) -> None:
        self._root, self._core, self._namespace = root, core, namespace
        self.phase = "install"
        self.runs: dict[str, ContainerRun] = {}

    def sample(self, now: datetime) -> None:
        for pod in self._core.list_namespaced_pod(self._namespace).items:
            for status in pod.status.container_statuses or []:
                self._see(pod, status)
        for run in self.runs.values():
            self._read(run, now)

    def _see(self, pod: Any, status: Any) -> None:
        cid = (status.container_id or "").removeprefix("containerd://")
        terminated = status.last_state.terminated if status.last_state else None
        if terminated and terminated.container_id:
            old = self.runs.get(terminated.container_id.removeprefix("containerd://"))
            if old is not None and not old.ended:
                old.ended = f"{terminated.reason} (exit code {terminated.exit_code})"
        running = status.state.running if status.state else None
        if not cid or running is None or cid in self.runs:
            return
        folder = self._root / "nodes" / pod.spec.node_name / "pod-logs"
        name = f"{self._namespace}_{pod.metadata.name}_{pod.metadata.uid}"
        log = folder / name / status.name / f"{status.restart_count}.log"
        self.runs[cid] = ContainerRun(
            pod.metadata.name,
            status.name,
            pod.spec.node_name,
            pod.metadata.uid,
            cid,
            log,
            running.started_at,
            self.phase,
        )

    def _read(self, run: ContainerRun, now: datetime) -> None:
        if run.first_report is None and run.log.is_file():
            lines = [line for line in run.log.read_text(errors="replace").splitlines() if line]
            if lines and run.first_line is None:
                run.first_line = _cri_time(lines[0])
            for line in lines:
                if _event(line.split(" ", 3)[-1]) in REPORT_EVENTS:
                    run.first_report = _cri_time(line)
                    break
        figures = container_figures(run.node, run.pod_uid, run.container_id)
        if figures:
            run.figures = figures
            if not run.first_minute and (now - run.started).total_seconds() >= FIRST_MINUTE:
                run.first_minute = figures

"""Benchmark 3, rollout efficiency: `brupop simulate` with 100 nodes at limit 10 and emulated
host steps of fixed length, reported as wall / ideal.

One node's emulated work is what its host spends on the update: the host commands its agent
runs between starting the update and reporting Idle on the new version (today refresh, prepare
and activate, then the update check of the agent started after the reboot: four steps; the
reboot itself is instant in the emulator), counted from the emulators' logs. The ideal rollout
is ceil(nodes / limit) x that work: every slot busy with host work all the time. The wall time
runs from the first node's agent starting its update to the last node back in Idle on the new
version, read from the agents' logs. The fleet runs twice: with simulate's intervals, and with
the original's (agent loop 5 s, controller tick 2 s).

A run whose verdict is not OK gives no figure: its entry holds the verdict and the exit code
only, the goal is not judged, and the script exits 1 (bench/run-all then keeps the last good
result).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from rig import VENV_BIN, emit, machine, progress

GOAL_RATIO = 1.10
ORIGINAL_INTERVALS = ("--agent-loop-interval", "5", "--controller-tick", "2")
# The original's values for what is not under test: state timeouts long enough for slow host
# steps (simulate's compressed ones would cut updates short), and the agents' idle pace (each
# idle check is an emulator process; 100 agents at simulate's pace would load the machine).
COMMON = (
    "--timeout-idle", "120", "--timeout-staged", "720", "--timeout-rebooted", "600",
    "--timeout-monitoring", "300", "--update-check-interval", "120", "--shadow-wait", "30",
)  # fmt: skip
TO_VERSION = "1.20.0"


def instant(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def read_lines(path: Path) -> list[dict[str, Any]]:
    lines = []
    for text in path.read_text(errors="replace").splitlines():
        if text.startswith("{"):
            try:
                lines.append(json.loads(text))
            except ValueError:
                continue
    return lines


def node_window(agent_log: Path) -> tuple[float, float] | None:
    """(the agent starts staging, the agent reports Idle on the new version), epoch seconds."""
    start = end = None
    for line in read_lines(agent_log):
        event = line.get("event")
        if (
            start is None
            and event == "update.drift"
            and line.get("desired_state") == "StagedAndPerformedUpdate"
        ):
            start = instant(line["timestamp"])
        elif (
            start is not None
            and event == "status.reported"
            and line.get("state") == "Idle"
            and line.get("current_version") == TO_VERSION
        ):
            end = instant(line["timestamp"])
    return (start, end) if start is not None and end is not None else None


@dataclass
class NodeTimes:
    """Where one node's update time went, in seconds."""

    busy: float  # from starting the update to Idle on the new version
    host_steps: int = 0
    host_work: float = 0.0  # emulated host commands
    poll_lag: float = 0.0  # a command finished on the host -> its agent noticed
    restart: float = 0.0  # the reboot -> the restarted agent's first host command
    controller: float = 0.0  # the agent reported a state -> it saw the next spec

    def other(self) -> float:
        return self.busy - self.host_work - self.poll_lag - self.restart - self.controller


def node_times(agent_log: Path, host_log: Path, start: float, end: float) -> NodeTimes:
    """Split the node's update window by what the agent and the emulated host logged."""
    times = NodeTimes(busy=end - start)
    began: dict[str, float] = {}
    finished: dict[str, list[float]] = {}
    rebooted_at = None
    for line in read_lines(host_log):
        at = instant(line["time"])
        if not start <= at <= end:
            continue
        event = line.get("event")
        if event == "command.started":
            began[line["command"]] = at
            if rebooted_at is not None:
                times.restart += at - rebooted_at
                rebooted_at = None
        elif event == "command.finished" and line["command"] in began:
            times.host_steps += 1
            times.host_work += at - began.pop(line["command"])
            finished.setdefault(line["command"], []).append(at)
        elif event == "host.rebooted":
            rebooted_at = at
    reported_at = None
    for line in read_lines(agent_log):
        at = instant(line["timestamp"])
        if not start <= at <= end:
            continue
        event = line.get("event")
        if event == "host.command_finished" and finished.get(line.get("command", "")):
            times.poll_lag += at - finished[line["command"]].pop(0)
        elif event == "status.reported":
            reported_at = at
        elif event == "update.drift" and reported_at is not None:
            times.controller += at - reported_at
            reported_at = None
    return times


def why_not_measured(report: dict[str, Any] | None, exit_code: int) -> str | None:
    """Why a run's figures must not be reported (its verdict), or None for a clean run."""
    if report is None:
        return f"no report (brupop simulate exited {exit_code})"
    if exit_code != 0 or report.get("ok") is not True:
        return str(report.get("verdict") or f"brupop simulate exited {exit_code}")
    return None


def exits_by_cause(report: dict[str, Any] | None) -> dict[str, Any]:
    """How the agents' processes ended, counted by cause and exit code ('shutdown-killed -9'):
    what a failed run leaves to explain itself."""
    if report is None:
        return {}
    counts = Counter(
        f"{exit_['cause']} {exit_['code']}"
        for node in report.get("nodes", [])
        for exit_ in node.get("agent_exits", [])
    )
    return {"agent_exits_by_cause": dict(sorted(counts.items()))}


def run_fleet(
    args: argparse.Namespace, work: Path, label: str, extra: tuple[str, ...]
) -> dict[str, Any]:
    run_dir = work / label
    run_dir.mkdir(parents=True, exist_ok=True)  # for simulate.out even if simulate makes nothing
    report_path = run_dir / "report.json"
    command = [
        str(VENV_BIN / "brupop"), "simulate",
        "--nodes", str(args.nodes), "--max-concurrent", str(args.limit),
        "--host-step", repr(args.host_step), "--host-poll-interval", repr(args.host_poll_interval),
        "--live", "off", "--timeout", repr(args.timeout),
        # simulate ends a run once every node has a shadow, none is outside Idle and nothing
        # changed for --settle-seconds; a first update check (one host step) can take longer
        # than its default of 3 s while no status is reported yet.
        "--settle-seconds", "120",
        "--report", str(report_path), "--work-dir", str(run_dir / "work"),
        "--log-dir", str(run_dir / "logs"), *COMMON, *extra,
    ]  # fmt: skip
    progress(f"{label}: brupop simulate {' '.join(command[2:])}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    (run_dir / "simulate.out").write_text(completed.stdout + completed.stderr)
    report = json.loads(report_path.read_text()) if report_path.is_file() else None
    failure = why_not_measured(report, completed.returncode)
    if failure is not None:
        progress(f"{label}: no figures: {failure}")
        failed = {"ok": False, "simulate_exit_code": completed.returncode, "verdict": failure}
        return failed | exits_by_cause(report)
    assert report is not None
    progress(f"{label}: {report['verdict']}")
    windows, nodes = {}, []
    for node in report["nodes"]:
        name = node["name"]
        agent_log = run_dir / "logs" / f"{name}.log"
        window = node_window(agent_log)
        if window is None:
            continue
        windows[name] = window
        host_log = run_dir / "work" / "nodes" / name / "host" / "host.log"
        nodes.append(node_times(agent_log, host_log, *window))
    if not windows:
        raise RuntimeError(f"{label}: no node updated; see {run_dir}")
    wall = max(end for _, end in windows.values()) - min(start for start, _ in windows.values())
    steps = statistics.median_low(node.host_steps for node in nodes)
    nominal_work = steps * args.host_step
    ideal = math.ceil(args.nodes / args.limit) * nominal_work

    def median(values: list[float]) -> float:
        return round(statistics.median(values), 2)

    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {
        "ok": True,
        "simulate_exit_code": completed.returncode,
        "verdict": report["verdict"],
        "nodes_updated": len(windows),
        "max_concurrent_observed": report["max_concurrent_observed"],
        "rollout_wall_seconds": round(wall, 1),
        "host_steps_per_node": steps,
        "one_node_emulated_work_seconds": nominal_work,
        "ideal_seconds": round(ideal, 1),
        "wall_over_ideal": round(wall / ideal, 3),
        "per_node_seconds_median": {
            "update": median([node.busy for node in nodes]),
            "host_work": median([node.host_work for node in nodes]),
            "host_poll_lag": median([node.poll_lag for node in nodes]),
            "agent_restart_after_reboot": median([node.restart for node in nodes]),
            "controller_reaction": median([node.controller for node in nodes]),
            "other": median([node.other() for node in nodes]),
        },
        "per_node_update_seconds_max": round(max(node.busy for node in nodes), 2),
        "whole_simulate_seconds": round(elapsed, 1),
        "cpu_cores_busy_average": round(cpu / elapsed, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--limit", type=int, default=10, help="--max-concurrent (default 10)")
    parser.add_argument(
        "--host-step",
        type=float,
        default=2.5,
        help="emulated seconds of each host command; one node's work is 4 steps (default 2.5)",
    )
    parser.add_argument(
        "--host-poll-interval",
        type=float,
        default=0.5,
        help="the agents' HOST_POLL_INTERVAL_SECONDS (default 0.5; each poll is an emulator "
        "process, so simulate's 0.05 would keep 10 staging nodes' polls alone above 2 cores)",
    )
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument(
        "--only-simulate-intervals",
        action="store_true",
        help="skip the run with the original's intervals",
    )
    parser.add_argument("--keep", action="store_true", help="keep logs and work directories")
    args = parser.parse_args()
    facts = machine()
    work = Path(tempfile.mkdtemp(prefix="brupop-bench-rollout-"))
    try:
        runs = {"simulate_intervals": run_fleet(args, work, "simulate-intervals", ())}
        if not args.only_simulate_intervals:
            runs["original_intervals"] = run_fleet(
                args, work, "original-intervals", ORIGINAL_INTERVALS
            )
    except Exception:
        progress(f"failed; files kept in {work}")
        raise
    if args.keep:
        progress(f"files kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    clean = all(run["ok"] for run in runs.values())
    ratio = runs["simulate_intervals"].get("wall_over_ideal")
    emit(
        {
            "benchmark": "rollout_efficiency",
            "machine": facts,
            "settings": {
                "nodes": args.nodes,
                "limit": args.limit,
                "host_step_seconds": args.host_step,
                "simulate_flags_for_both_runs": " ".join(COMMON),
                "host_poll_interval_seconds": args.host_poll_interval,
                "original_intervals": " ".join(ORIGINAL_INTERVALS),
            },
            "ok": clean,
            **runs,
            "goals": {
                "wall_over_ideal_at_most": GOAL_RATIO,
                # None: not judged, a run failed and gave no figure.
                "met": ratio <= GOAL_RATIO if clean and ratio is not None else None,
            },
        }
    )
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())

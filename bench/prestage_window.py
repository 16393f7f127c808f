"""Benchmark: pre-staging. `brupop simulate` with 12 nodes at limit 2, emulated hosts whose
prepare takes 60 s and whose reboot takes 10 s (the agent is back 10 s after the host went
down), run with and without the policy's `prestage` section, plus a pause in the middle of
the staging.

Per node, from the agents' logs: the time cordoned (the drain begins -> the node is given
back after its reboot) and the time in its turn (the update asked for -> Idle on the new
version). Per fleet: the window it needs (the first turn begins -> the last ends) and, from
the emulated hosts' logs, the most prepare commands running at once. The paused run reports
how many hosts are left activated (Ready) and how many prepare commands began after the pause.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rig import VENV_BIN, emit, machine, progress
from rollout_efficiency import instant, node_window, read_lines

TO_VERSION = "1.20.0"
WINDOW = "* * 2-5 * * * *"  # opens at 02:00 (UTC) every day
WINDOW_OPENS = "2026-12-07T02:00:00Z"
COMMON = (
    "--timeout-idle", "120", "--timeout-staged", "300", "--timeout-rebooted", "300",
    "--timeout-monitoring", "120", "--host-command-deadline", "180",
    "--update-check-interval", "30", "--live", "off",
)  # fmt: skip


def policy(prestage: dict[str, Any] | None) -> str:
    spec: dict[str, Any] = {"windows": [{"cron": WINDOW}]}
    if prestage is not None:
        spec["prestage"] = prestage
    document = {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": "default"},
        "spec": spec,
    }
    return json.dumps(document)  # JSON is YAML


def cordoned(agent_log: Path) -> float | None:
    """Seconds from the drain's start to the node given back after its reboot."""
    began = None
    for line in read_lines(agent_log):
        if line.get("event") == "node.draining" and began is None:
            began = instant(line["timestamp"])
        elif line.get("event") in ("node.updated", "node.recovered") and began is not None:
            return instant(line["timestamp"]) - began
    return None


def prepare_spans(work: Path) -> list[tuple[float, float]]:
    """(start, end) of every prepare command the emulated hosts ran (their own clock)."""
    spans = []
    for host_log in sorted(work.glob("nodes/*/host/host.log")):
        started = None
        for line in read_lines(host_log):
            if line.get("command") != "prepare":
                continue
            if line.get("event") == "command.started":
                started = instant(line["time"])
            elif line.get("event") == "command.finished" and started is not None:
                spans.append((started, instant(line["time"])))
                started = None
        if started is not None:
            spans.append((started, float("inf")))
    return spans


def most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


def host_states(work: Path) -> dict[str, int]:
    """How many emulated hosts end in each update state."""
    counts: dict[str, int] = {}
    for state_file in work.glob("nodes/*/host/state.json"):
        status = json.loads(state_file.read_text()).get("update_status") or {}
        state = str(status.get("update_state", "uninitialised"))
        counts[state] = counts.get(state, 0) + 1
    return dict(sorted(counts.items()))


def simulate(run: Path, args: argparse.Namespace, extra: list[str]) -> dict[str, Any]:
    report_path = run / "report.json"
    command = [
        str(VENV_BIN / "brupop"), "simulate", "--nodes", str(args.nodes),
        "--max-concurrent", str(args.limit), "--host-prepare", str(args.prepare),
        "--restart-backoff", str(args.reboot), "--restart-backoff-max", str(args.reboot),
        "--report", str(report_path), "--log-dir", str(run / "logs"),
        "--work-dir", str(run / "work"), "--timeout", "1800", *COMMON, *extra,
    ]  # fmt: skip
    progress(f"{run.name}: {' '.join(command[2:])}")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    (run / "simulate.out").write_text(done.stdout + done.stderr)
    report = json.loads(report_path.read_text()) if report_path.is_file() else {}
    progress(f"{run.name}: exit {done.returncode}: {report.get('verdict')}")
    return {"exit_code": done.returncode, "verdict": report.get("verdict"), "report": report}


def rollout(run: Path, args: argparse.Namespace, prestage: dict[str, Any] | None) -> dict[str, Any]:
    run.mkdir(parents=True)
    (run / "policy.yaml").write_text(policy(prestage))
    # Without prestaging the window opens 5 s in; with it, late enough for the staging ahead.
    start_at = "2026-12-07T01:59:55Z" if prestage is None else args.staging_start
    # Staging ahead changes no node's state: the run must not count it as settled.
    settle = str(int(instant(WINDOW_OPENS) - instant(start_at)) + 60)
    extra = [
        "--policy",
        str(run / "policy.yaml"),
        "--start-at",
        start_at,
        "--settle-seconds",
        settle,
    ]
    ran = simulate(run, args, extra)
    logs = sorted((run / "logs").glob("node-*.log"))
    turns = [w for log in logs if (w := node_window(log)) is not None]
    cordons = [c for log in logs if (c := cordoned(log)) is not None]
    return {
        "ok": ran["report"].get("ok") is True,
        "verdict": ran["verdict"],
        "cordoned_seconds_per_node": _summary(cordons),
        "turn_seconds_per_node": _summary([end - start for start, end in turns]),
        "window_seconds": round(max(e for _, e in turns) - min(s for s, _ in turns), 1)
        if turns
        else None,
        "most_prepares_at_once": most_at_once(prepare_spans(run / "work")),
    }


def paused(run: Path, args: argparse.Namespace, prestage: dict[str, Any]) -> dict[str, Any]:
    """The window open from the start, the fleet paused while hosts are preparing."""
    run.mkdir(parents=True)
    (run / "policy.yaml").write_text(policy(prestage))
    extra = ["--policy", str(run / "policy.yaml"), "--start-at", WINDOW_OPENS]
    ran = simulate(run, args, [*extra, "--pause-at", str(args.pause_at), "--settle-seconds", "90"])
    report = ran["report"]
    pauses = report.get("pauses") or []
    spans = prepare_spans(run / "work")
    # The hosts keep the run's clock, which starts at WINDOW_OPENS; the report counts from there.
    paused_at = instant(WINDOW_OPENS) + pauses[0]["written_at"] if pauses else float("inf")
    return {
        "verdict": ran["verdict"],
        "paused_after_seconds": pauses[0]["written_at"] if pauses else None,
        "host_states_at_end": host_states(run / "work"),
        "prepares": len(spans),
        "prepares_begun_after_the_pause": sum(1 for start, _ in spans if start > paused_at),
        "prepares_running_at_the_pause": sum(1 for s, e in spans if s <= paused_at < e),
        "most_prepares_at_once": most_at_once(spans),
    }


def _summary(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "nodes": len(values),
        "mean": round(statistics.mean(values), 1),
        "max": round(max(values), 1),
        "min": round(min(values), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=12)
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--prepare", type=float, default=60.0)
    parser.add_argument("--reboot", type=float, default=10.0)
    parser.add_argument("--prestage-concurrent", type=int, default=3)
    parser.add_argument("--staging-start", default="2026-12-07T01:55:00Z")
    parser.add_argument("--pause-at", type=float, default=30.0)
    parser.add_argument("--only", choices=("without", "with", "paused"), action="append")
    args = parser.parse_args()
    prestage = {"enabled": True, "maxConcurrent": args.prestage_concurrent}
    work = Path(tempfile.mkdtemp(prefix="brupop-prestage-"))
    chosen = args.only or ["without", "with", "paused"]
    result: dict[str, Any] = {"benchmark": "prestage_window", "machine": machine()}
    result["settings"] = {k: v for k, v in vars(args).items() if k != "only"}
    if "without" in chosen:
        result["without_prestage"] = rollout(work / "without", args, None)
    if "with" in chosen:
        result["with_prestage"] = rollout(work / "with", args, prestage)
    if "paused" in chosen:
        result["paused_mid_staging"] = paused(work / "paused", args, prestage)
    result["work_dir"] = "kept in a temporary directory"
    emit(result)
    rollouts = [result[k] for k in ("without_prestage", "with_prestage") if k in result]
    sys.exit(0 if all(run["ok"] for run in rollouts) else 1)  # run-all keeps no failed figures


if __name__ == "__main__":
    main()

"""Benchmark: brupop's pods on real nodes during `helm install`, a rollout and idle.

On a cluster started with `scripts/control-plane up DIR --real-nodes N`: a Bottlerocket host
under each node (offering the next version), the chart packaged and installed by Helm with
DIR/real-nodes-values.yaml only, then every container run of brupop's namespace sampled once a
second (bench/real_node_samples.py) through three phases: install (until every pod is ready and
every node has reported), rollout (until every node runs the offered version, Idle) and idle
(`--idle` seconds more). Per container run: start to first log line and to first status report,
CPU throttled in its first minute, memory peak against its limit, OOM kills; per pod, restarts;
per phase, the figures against the goals (report within 5 s, at most 10 % of the first minute
throttled, no OOM kill, memory peak under 80 % of the limit).

    python bench/real_node_phases.py DIR [--idle 120] > bench/results/real_node_phases.json
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubernetes import client, config
from real_node_samples import FIRST_MINUTE, Sampler
from rig import emit, machine, progress

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from tests.realnode.chart_release import NAMESPACE, helm, package, prepare_nodes  # noqa: E402
from tests.support.control_plane.bottlerocket_host import OFFERED_VERSION  # noqa: E402

GROUP, VERSION, SHADOWS = "brupop.bottlerocket.aws", "v2", "bottlerocketshadows"


def shadows(api: client.ApiClient) -> list[dict[str, Any]]:
    custom = client.CustomObjectsApi(api)
    try:
        listed = custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, SHADOWS)
    except client.ApiException:
        return []
    return list(listed["items"])


def installed(api: client.ApiClient, nodes: int) -> bool:
    """Every brupop pod ready and a status from every node's agent."""
    pods = client.CoreV1Api(api).list_namespaced_pod(NAMESPACE).items
    ready = all(s.ready for pod in pods for s in pod.status.container_statuses or [])
    reported = [item for item in shadows(api) if item.get("status")]
    return bool(pods) and ready and len(reported) == nodes


def rolled_out(api: client.ApiClient, nodes: int) -> bool:
    done = [
        item
        for item in shadows(api)
        if (item.get("status") or {}).get("current_version") == OFFERED_VERSION
        and (item.get("status") or {}).get("current_state") == "Idle"
    ]
    return len(done) == nodes


def sample_until(sampler: Sampler, done: Callable[[], bool], seconds: float) -> float:
    """Sample once a second until `done()` or `seconds`; the seconds it took."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        sampler.sample(datetime.now(UTC))
        if done():
            break
        time.sleep(1.0)
    return round(time.monotonic() - started, 1)


def phase_summary(rows: list[dict[str, Any]], phase: str) -> dict[str, Any]:
    """The phase's worst figures against the goals."""
    ours = [row for row in rows if row["phase"] == phase]
    agents = [row for row in ours if row["pod"].startswith("brupop-agent")]
    reports = [row["start_to_first_report_s"] for row in agents]
    throttled = [row["first_minute_throttled_s"] for row in ours if row["first_minute_complete"]]
    peaks = [row["memory_peak_of_limit"] for row in ours if row["memory_peak_of_limit"]]
    worst_report = max((r for r in reports if r is not None), default=None)
    worst_throttle = max(throttled, default=0.0) / FIRST_MINUTE
    return {
        "container_runs": len(ours),
        "agent_runs": len(agents),
        "agent_runs_without_report": sum(r is None for r in reports),
        "agent_worst_start_to_first_report_s": worst_report,
        "worst_first_minute_throttled_fraction": round(worst_throttle, 3),
        "worst_memory_peak_of_limit": max(peaks, default=None),
        "oom_kills": sum(row["oom_kills"] or 0 for row in ours),
        "goals_met": {
            "agent_reports_within_5_s": worst_report is not None and worst_report <= 5.0,
            "throttled_at_most_10_percent_of_first_minute": worst_throttle <= 0.10,
            "no_oom_kill": all(not row["oom_kills"] for row in ours),
            "memory_peak_under_80_percent_of_limit": all(p < 0.8 for p in peaks),
        },
    }


def run(root: Path, idle: float, deadline: float) -> dict[str, Any]:
    with config.new_client_from_config(config_file=str(root / "kubeconfig")) as api:
        core = client.CoreV1Api(api)
        nodes = tuple(
            n.metadata.name for n in core.list_node().items if n.metadata.name.startswith("real-")
        )
        prepare_nodes(root, core, nodes)
        chart = package(Path(tempfile.mkdtemp(prefix="brupop-chart-")))
        argv = [helm(), "install", "brupop", str(chart), "--kubeconfig", str(root / "kubeconfig")]
        values = ["-f", str(root / "real-nodes-values.yaml")]
        helm_install = subprocess.run([*argv, *values], capture_output=True, text=True)
        if helm_install.returncode != 0:
            raise SystemExit("helm install failed")
        sampler, seconds = Sampler(root, core, NAMESPACE), {}
        progress("install: until every pod is ready and every node has reported")
        seconds["install"] = sample_until(sampler, lambda: installed(api, len(nodes)), deadline)
        sampler.phase = "rollout"
        progress("rollout: until every node runs the offered version")
        seconds["rollout"] = sample_until(sampler, lambda: rolled_out(api, len(nodes)), deadline)
        sampler.phase = "idle"
        progress(f"idle: {idle:.0f} s")
        before = {cid: dict(run.figures) for cid, run in sampler.runs.items() if not run.ended}
        seconds["idle"] = sample_until(sampler, lambda: False, max(idle, FIRST_MINUTE))
        pods = core.list_namespaced_pod(NAMESPACE).items
    rows = [run.row() for run in sampler.runs.values()]
    return {
        "phase_seconds": seconds,
        "phases": {phase: phase_summary(rows, phase) for phase in ("install", "rollout")},
        "idle_throttled_s": {
            sampler.runs[cid].pod: round(
                sampler.runs[cid].figures.get("cpu_throttled_seconds", 0)
                - old.get("cpu_throttled_seconds", 0),
                3,
            )
            for cid, old in before.items()
            if not sampler.runs[cid].ended
        },
        "restarts": {
            pod.metadata.name: sum(s.restart_count for s in pod.status.container_statuses or [])
            for pod in pods
        },
        "container_runs": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--idle", type=float, default=120.0)
    parser.add_argument("--deadline", type=float, default=1500.0)
    arguments = parser.parse_args()
    started = machine()
    figures = run(arguments.dir.resolve(), arguments.idle, arguments.deadline)
    emit({"benchmark": "real_node_phases", "machine": started, **figures})


if __name__ == "__main__":
    main()

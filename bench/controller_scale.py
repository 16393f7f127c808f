"""Benchmark 2, controller scale: the cost of one decision pass, and resident memory, with
1,000, 5,000 and 10,000 shadows in the in-memory cluster, idle and mid-rollout.

Each (size, phase) runs in a fresh process, so its memory figures are its own. A pass is one
`ControllerService.tick()` as the leader: list every shadow and Node, decide the rollout, write
nothing (the phases are steady: no node is due a change), publish metrics and every node's
REASON. Its cost is the process's CPU time around the call, on the in-memory cluster (no JSON
decoding of a Kubernetes list).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rig import NAMESPACE, emit, machine, mib, own_rss_kib, progress, send_logs_to

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.concurrency import ConcurrencyLimit
from brupop.domain.maintenance_window import MaintenanceWindow
from brupop.domain.rollout import RolloutPolicy
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowSpec, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.service import ControllerService

HERE = Path(__file__).resolve()
FROM_VERSION = "1.19.0"
TO_VERSION = "1.20.0"
GOAL_MS_PER_PASS_AT_5000 = 50.0
IN_PROGRESS = (
    # (spec state, status state): an agent still working on what the controller asked
    (UpdateState.STAGED_AND_PERFORMED_UPDATE, UpdateState.IDLE),
    (UpdateState.REBOOTED_INTO_UPDATE, UpdateState.STAGED_AND_PERFORMED_UPDATE),
    (UpdateState.MONITORING_UPDATE, UpdateState.REBOOTED_INTO_UPDATE),
    (UpdateState.IDLE, UpdateState.MONITORING_UPDATE),
)


def populate(cluster: InMemoryCluster, size: int, phase: str, limit: int) -> None:
    """`size` opted-in nodes with shadows and statuses.

    idle: every node Idle on the newest version, nothing offered.
    mid-rollout: a third already updated, `limit` nodes in the middle of an update (each
    state represented), the rest Idle and offered the new version, waiting for a slot.
    """
    now = datetime.now(UTC) - timedelta(seconds=5)
    updated = size // 3 if phase == "mid-rollout" else size
    for index in range(size):
        name = f"ip-10-0-{index // 250}-{index % 250}.compute.internal"
        node = cluster.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE})
        cluster.shadows.create(name, node.uid)
        if phase == "idle" or index < updated:
            status = ShadowStatus(
                current_version=TO_VERSION, target_version=TO_VERSION, current_state="Idle"
            )
            cluster.shadows.update_status(shadow_name(name), status)
            continue
        busy = index - updated
        if busy < limit:
            spec_state, status_state = IN_PROGRESS[busy % len(IN_PROGRESS)]
            spec = ShadowSpec(state=spec_state, state_transition_timestamp=now, version=TO_VERSION)
            cluster.shadows.replace_spec(shadow_name(name), spec, None)
            if spec_state is UpdateState.REBOOTED_INTO_UPDATE:  # draining: cordoned, a pod left
                cluster.nodes.set_unschedulable(name, True)
                cluster.add_pod("default", f"web-{index}", name, labels={"app": "web"})
            current = TO_VERSION if status_state is UpdateState.MONITORING_UPDATE else FROM_VERSION
        else:
            status_state, current = UpdateState.IDLE, FROM_VERSION
        status = ShadowStatus(
            current_version=current, target_version=TO_VERSION, current_state=status_state
        )
        cluster.shadows.update_status(shadow_name(name), status)


def one(size: int, phase: str, limit: int, passes: int, log: Path) -> dict[str, Any]:
    """Measure one (size, phase) in this process."""
    send_logs_to(log)
    cluster = InMemoryCluster(NAMESPACE)
    baseline_kib, _ = own_rss_kib()
    populate(cluster, size, phase, limit)
    config = ControllerConfig(
        policy=RolloutPolicy(limit=ConcurrencyLimit(limit)),
        window=MaintenanceWindow.starting("* * * * * * *", now=cluster.clock.now()),
        namespace=NAMESPACE,
        identity="brupop-controller-bench",
    )
    controller = ControllerService(
        shadows=cluster.shadows,
        nodes=cluster.nodes,
        pods=cluster.pods,
        leases=cluster.leases,
        events=cluster.events,
        clock=cluster.clock,
        config=config,
    )
    controller.tick()  # leader election, first REASON of every node logged once
    writes_before = cluster.revisions.last
    cpu_ms, wall_ms = [], []
    for _ in range(passes):
        cpu, wall = time.process_time(), time.perf_counter()
        controller.tick()
        cpu_ms.append(1000 * (time.process_time() - cpu))
        wall_ms.append(1000 * (time.perf_counter() - wall))
    rss_kib, peak_kib = own_rss_kib()
    return {
        "shadows": size,
        "phase": phase,
        "passes": passes,
        "cpu_ms_per_pass": {
            "median": round(statistics.median(cpu_ms), 2),
            "min": round(min(cpu_ms), 2),
            "max": round(max(cpu_ms), 2),
        },
        "wall_ms_per_pass_median": round(statistics.median(wall_ms), 2),
        "rss_mib": mib(rss_kib),
        "peak_rss_mib": mib(peak_kib),
        "rss_mib_over_empty_process": mib(rss_kib - baseline_kib),
        "cluster_writes_in_measured_passes": cluster.revisions.last - writes_before,
    }


def run_child(size: int, phase: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable, str(HERE), "--child", str(size), phase,
        "--limit", str(args.limit), "--passes", str(args.passes), "--log", args.log,
    ]  # fmt: skip
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(output)
    return result


def run_case(size: int, phase: str, args: argparse.Namespace) -> dict[str, Any]:
    """The case in `--repeats` fresh processes: the median process, and every process's
    median (the spread shows how much other work on the machine moved the figure)."""
    runs = sorted(
        (run_child(size, phase, args) for _ in range(args.repeats)),
        key=lambda run: float(run["cpu_ms_per_pass"]["median"]),
    )
    middle = dict(runs[len(runs) // 2])
    middle["cpu_ms_per_pass_median_by_process"] = [r["cpu_ms_per_pass"]["median"] for r in runs]
    return middle


def growth(rows: list[dict[str, Any]], phase: str) -> dict[str, float]:
    """Cost per pass per 1,000 shadows at each size: flat means linear growth."""
    return {
        str(row["shadows"]): round(1000 * row["cpu_ms_per_pass"]["median"] / row["shadows"], 3)
        for row in rows
        if row["phase"] == phase
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,5000,10000")
    parser.add_argument("--phases", default="idle,mid-rollout")
    parser.add_argument(
        "--limit",
        type=int,
        default=10,
        help="MAX_CONCURRENT_UPDATE, nodes mid-update in mid-rollout (default 10)",
    )
    parser.add_argument("--passes", type=int, default=15, help="measured passes per process")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per case")
    parser.add_argument("--log", default="/dev/null", help="the controller's log lines")
    parser.add_argument("--child", nargs=2, metavar=("SIZE", "PHASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        size, phase = int(args.child[0]), args.child[1]
        print(json.dumps(one(size, phase, args.limit, args.passes, Path(args.log))))
        return 0
    facts = machine()
    rows = []
    for size in (int(text) for text in args.sizes.split(",")):
        for phase in args.phases.split(","):
            progress(f"{size} shadows, {phase}")
            rows.append(run_case(size, phase, args))
            progress(f"  {rows[-1]['cpu_ms_per_pass']['median']} ms CPU per pass")
    at_5000 = [r["cpu_ms_per_pass"]["median"] for r in rows if r["shadows"] == 5000]
    emit(
        {
            "benchmark": "controller_scale",
            "machine": facts,
            "settings": {"limit": args.limit, "passes": args.passes, "repeats": args.repeats},
            "cases": rows,
            "cpu_ms_per_pass_per_1000_shadows": {
                phase: growth(rows, phase) for phase in args.phases.split(",")
            },
            "goals": {
                "ms_per_pass_at_5000_at_most": GOAL_MS_PER_PASS_AT_5000,
                "met_at_5000": bool(at_5000) and max(at_5000) <= GOAL_MS_PER_PASS_AT_5000,
            },
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

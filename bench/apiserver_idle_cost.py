#!/usr/bin/env python3
"""What brupop's control side costs at a small idle fleet on the real control plane: one
controller and one apiserver (with its conversion worker) over `--nodes` kwok Nodes whose agents
long-poll as real agents do; each process's RSS and CPU over an idle window.

    bench/apiserver_idle_cost.py --nodes 20 --idle-seconds 120

RSS is read every second (VmRSS; the apiserver's figure adds its children, the conversion
worker); CPU is user + system time from /proc over the window, in ms per second. Prints one JSON
object and writes it to bench/results/apiserver_idle_cost_<N>.json (or --out).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_cluster import proc_stats
from real_cluster.counters import wait_for_leader
from real_cluster.session import Session, control_plane_down, control_plane_up
from rig import emit, machine

RESULTS = Path(__file__).resolve().parent / "results"


def children(pid: int) -> list[int]:
    """The direct children of `pid` (the apiserver's conversion worker)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def family_reading(pid: int) -> dict[str, float]:
    """RSS (MiB) and CPU seconds of `pid` alone and with its children."""
    own_rss, own_cpu = proc_stats.rss_mib(pid), proc_stats.cpu_seconds(pid)
    rss, cpu = own_rss, own_cpu
    for child in children(pid):
        try:
            rss += proc_stats.rss_mib(child)
            cpu += proc_stats.cpu_seconds(child)
        except OSError:
            continue
    return {"own_rss": own_rss, "rss": rss, "own_cpu": own_cpu, "cpu": cpu}


def idle_window(pids: dict[str, int], seconds: float) -> dict[str, Any]:
    """Each process's RSS (last and peak) and CPU rate over `seconds`."""
    first = {name: family_reading(pid) for name, pid in pids.items()}
    peak = {name: reading["rss"] for name, reading in first.items()}
    began = time.monotonic()
    last = first
    while time.monotonic() - began < seconds:
        time.sleep(1.0)
        last = {name: family_reading(pid) for name, pid in pids.items()}
        peak = {name: max(peak[name], last[name]["rss"]) for name in pids}
    elapsed = time.monotonic() - began
    return {
        name: {
            "rss_mib": round(last[name]["rss"], 1),
            "own_rss_mib": round(last[name]["own_rss"], 1),
            "peak_rss_mib": round(peak[name], 1),
            "cpu_ms_per_s": round((last[name]["cpu"] - first[name]["cpu"]) * 1000 / elapsed, 3),
            "own_cpu_ms_per_s": round(
                (last[name]["own_cpu"] - first[name]["own_cpu"]) * 1000 / elapsed, 3
            ),
        }
        for name in pids
    } | {"seconds": round(elapsed, 1)}


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    cp = work / "control-plane"
    kubeconfig = args.kubeconfig or control_plane_up(cp)
    session = Session.open(kubeconfig, work)
    try:
        session.install_chart()
        session.build_fleet(args.nodes, 0, batch=1000, threads=4)
        session.start_brupop(1, 1)
        wait_for_leader(session)
        session.start_agents(3.0, ready_seconds=120.0)
        time.sleep(args.settle_seconds)
        pids = {
            "controller": session.brupop.controllers[0].pid,
            "apiserver": session.brupop.apiservers[0].pid,
        }
        figures = idle_window(pids, args.idle_seconds)
        session.stop_agents()
    finally:
        session.close()
        if args.kubeconfig is None:
            control_plane_down(cp)
    return {
        "benchmark": "apiserver_idle_cost",
        "nodes": args.nodes,
        "machine": machine(),
        "load_average": os.getloadavg(),
        "settle_seconds": args.settle_seconds,
        "idle": figures,
        "method": "VmRSS every 1 s (apiserver: the server plus its children, the conversion"
        " worker); CPU: /proc utime+stime over the window; agents: the protocol generator"
        " (bench/real_cluster/agent_load.py), one long-poll of 30 s at a time each",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--idle-seconds", type=float, default=120.0)
    parser.add_argument("--settle-seconds", type=float, default=30.0)
    parser.add_argument("--kubeconfig", type=Path, help="reuse this control plane")
    parser.add_argument("--out", type=Path, help="default: results/apiserver_idle_cost_<N>.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="brupop-idle-cost-") as folder:
        result = measure(args, Path(folder))
    emit(result, args.out or RESULTS / f"apiserver_idle_cost_{args.nodes}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

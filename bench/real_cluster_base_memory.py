#!/usr/bin/env python3
"""What an apiserver replica holds before any agent connects: one replica per glibc malloc
setting over a real control plane with `--nodes` kwok Nodes, agent pods and shadows, its RSS read
30, 60 and 90 s after it listens (the shadow feed and the agent pod mirror have listed by then).
With `--allocations`, one more replica runs under tracemalloc and reports where its live memory
was allocated at 90 s, by file (its own RSS is inflated by the tracing and is not a figure).

The replica's RSS with agents, less this, is what the agents' connections cost (section 7 of
docs/bench.md). Prints one JSON object and keeps it in bench/results/.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_cluster import brupop_processes, proc_stats
from real_cluster.session import Session, control_plane_down, control_plane_up
from rig import emit, machine

RESULTS = Path(__file__).resolve().parent / "results"
ARENAS = {"MALLOC_ARENA_MAX": "2"}
MMAP = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}
VARIANTS: dict[str, dict[str, str]] = {
    "default": {},
    "arena_max_2": ARENAS,
    "mmap_threshold_128k": MMAP,
    "both": ARENAS | MMAP,
}


TRACED_SITE = Path(__file__).resolve().parent / "real_cluster" / "traced_site"


def traced(work: Path) -> dict[str, str]:
    """The settings of a replica whose allocations are traced (see traced_site)."""
    path = [str(TRACED_SITE), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {
        "PYTHONPATH": os.pathsep.join(path),
        "BRUPOP_BENCH_ALLOCATIONS": str(work / "traced" / "allocations.txt"),
    }


def allocations(process: brupop_processes.BrupopProcess, work: Path) -> list[str]:
    """The traced replica's live memory by file, asked for now (the tracing is slow to write)."""
    out = work / "traced" / "allocations.txt"
    os.kill(process.process.pid, signal.SIGUSR1)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (
            out.exists()
            and out.read_text().endswith("\n")
            and len(out.read_text().splitlines()) > 5
        ):
            return out.read_text().splitlines()
        time.sleep(1)
    return ["no answer from the traced replica within 120 s"]


def replicas(
    session: Session, work: Path, variants: dict[str, dict[str, str]]
) -> dict[str, brupop_processes.BrupopProcess]:
    """One replica per setting, each with a folder of its own."""
    started = {}
    for name, extra in variants.items():
        folder = work / name
        folder.mkdir(parents=True, exist_ok=True)
        started[name] = brupop_processes.start_apiservers(
            session.access, session.tls, 1, folder, extra_env=extra
        )[0]
    return started


def measure(nodes: int, work: Path, *, traced_too: bool) -> dict[str, Any]:
    cp = work / "control-plane"
    session = Session.open(control_plane_up(cp), work)
    try:
        session.install_chart()
        session.build_fleet(nodes, 0, batch=1000, threads=16)
        variants = dict(VARIANTS)
        if traced_too:
            variants["traced"] = traced(work / "brupop")
        started = replicas(session, work / "brupop", variants)
        brupop_processes.wait_listening(list(started.values()))
        rss: dict[str, dict[str, float]] = {}
        for after in (30, 60, 90):
            time.sleep(30)
            rss[f"{after}s"] = {
                name: round(proc_stats.rss_mib(p.pid), 1)
                for name, p in started.items()
                if name != "traced"
            }
        traced_lines = allocations(started["traced"], work / "brupop") if traced_too else []
        for process in started.values():
            process.process.terminate()
    finally:
        control_plane_down(cp)
    return {
        "benchmark": "real_cluster_base_memory",
        "nodes": nodes,
        "machine": machine(),
        "settings": VARIANTS,
        "rss_mib_after_listening": rss,
        **({"traced_allocations_by_file": traced_lines} if traced_too else {}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--allocations", action="store_true", help="one more replica, traced")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="brupop-base-memory-") as folder:
        result = measure(args.nodes, Path(folder), traced_too=args.allocations)
    emit(result, RESULTS / f"real_cluster_base_memory_{args.nodes}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

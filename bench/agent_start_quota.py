"""Benchmark: the agent's wall time from exec to its first request under a CPU limit.

A kubelet turns a container's `limits.cpu` into a CFS quota: `cpu: 10m` is 1 ms of CPU per
100 ms period. This benchmark does the same with a cgroup v1 `cpu` controller (it needs root and
a v1 hierarchy at /sys/fs/cgroup/cpu): each run starts `brupop agent` cold inside a fresh group
with the given quota, against the loopback stand-in of `agent_start.py`, and reads the wall time
from exec to the first request's headers, the CPU spent by then, and how many periods the
kernel throttled. Medians of N runs per limit. The goal: a first request within 5 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_start import StandIn, agent_env
from rig import emit, machine, progress

from brupop.simulation.fleet.certificates import write_loopback_tls

CPU_HIERARCHY = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 100_000  # the kubelet's CFS period
GOAL_SECONDS = 5.0
DEFAULT_LIMITS = ("10m", "25m", "50m", "100m", "200m", "none")


@dataclass
class LimitedStart:
    """One agent started under a quota: wall time and CPU to its first request."""

    seconds: float
    cpu_ms: float
    throttled_periods: int


def quota_us(limit: str) -> int:
    """A Kubernetes CPU limit (`10m`, `1`, `none`) as cfs_quota_us for a 100 ms period."""
    if limit == "none":
        return -1
    millicores = int(limit[:-1]) if limit.endswith("m") else int(float(limit) * 1000)
    return PERIOD_US * millicores // 1000


class CpuGroup:
    """A cgroup v1 `cpu` group of our own, with a CFS quota; removed by `close`."""

    def __init__(self, name: str, quota: int) -> None:
        self.path = CPU_HIERARCHY / name
        self.path.mkdir()
        (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (self.path / "cpu.cfs_quota_us").write_text(str(quota))

    def enter(self) -> Callable[[], None]:
        """What a child runs before exec to join the group (the kubelet starts it inside)."""
        procs = str(self.path / "cgroup.procs")

        def join() -> None:
            with open(procs, "w") as handle:  # between fork and exec
                handle.write(str(os.getpid()))

        return join

    def throttled(self) -> int:
        for line in (self.path / "cpu.stat").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "nr_throttled":
                return int(value)
        return 0

    def close(self) -> None:
        self.path.rmdir()


def one_start(limit: str, env: dict[str, str], stand_in: StandIn, log: Path) -> LimitedStart:
    """Start the agent in a new group limited to `limit`, wait for its first request, kill it."""
    group = CpuGroup(f"brupop-bench-agent-start-{os.getpid()}", quota_us(limit))
    try:
        with log.open("wb") as output:
            started = time.monotonic()
            process = subprocess.Popen(  # the hook only joins a cgroup
                [sys.executable, "-m", "brupop", "agent"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                preexec_fn=group.enter(),
            )
        try:
            seen = stand_in.serve_one(process.pid, timeout=120.0)
            seconds = time.monotonic() - started
            throttled = group.throttled()
        finally:
            process.kill()
            process.wait()
    finally:
        group.close()
    if seen.request_cpu_ms is None:
        raise RuntimeError(f"no request from the agent: {log.read_text(errors='replace')[-2000:]}")
    return LimitedStart(seconds, seen.request_cpu_ms, throttled)


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    tls = write_loopback_tls(work / "tls")
    stand_in = StandIn(tls)
    env = agent_env(stand_in.url, tls, work)
    log = work / "agent.log"
    by_limit: dict[str, Any] = {}
    try:
        one_start("none", env, stand_in, log)  # warm the page cache
        for limit in args.limits:
            starts = []
            for run in range(args.runs):
                starts.append(one_start(limit, env, stand_in, log))
                progress(f"{limit} run {run + 1}/{args.runs}: {starts[-1].seconds:.2f} s")
            seconds = sorted(start.seconds for start in starts)
            by_limit[limit] = {
                "cfs_quota_us": quota_us(limit),
                "seconds_to_first_request": {
                    "median": round(statistics.median(seconds), 2),
                    "min": round(seconds[0], 2),
                    "max": round(seconds[-1], 2),
                },
                "cpu_ms_to_first_request": round(statistics.median(s.cpu_ms for s in starts), 1),
                "throttled_periods": statistics.median(s.throttled_periods for s in starts),
                "within_goal": seconds[-1] <= GOAL_SECONDS,
            }
    finally:
        stand_in.close()
    return {
        "benchmark": "agent_start_quota",
        "machine": machine(),
        "runs_per_limit": args.runs,
        "cfs_period_us": PERIOD_US,
        "goal_seconds": GOAL_SECONDS,
        "by_limit": by_limit,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="cold starts per limit (default 5)")
    parser.add_argument(
        "--limits", nargs="+", default=list(DEFAULT_LIMITS), help="CPU limits (10m ... none)"
    )
    args = parser.parse_args()
    if not (CPU_HIERARCHY / "cpu.cfs_quota_us").exists() or os.geteuid() != 0:
        print(f"needs root and a cgroup v1 cpu hierarchy at {CPU_HIERARCHY}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="brupop-bench-agent-quota-"))
    try:
        result = measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

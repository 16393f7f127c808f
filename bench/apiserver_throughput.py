"""Benchmark 4, apiserver throughput: authorized status updates per second, and their latency,
with 200 simulated agents over loopback HTTPS, TokenReviews cached.

The apiserver runs in its own process (apiserver_process.py); the simulated agents run in
`--generators` other processes (load_agents.py), so the load never shares the server's GIL. All
share this machine's cores: the figures say how much CPU each side used in the window.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ready_file import READY_FILE, start_until_ready
from rig import ProcessReading, emit, machine, percentile, progress, read_process
from work_dir import measure_in_work_dir

HERE = Path(__file__).resolve().parent
GOAL_REQUESTS_PER_SECOND = 500.0
GOAL_P99_MS = 50.0


def start_server(work: Path, args: argparse.Namespace) -> subprocess.Popen[str]:
    command = [
        sys.executable, str(HERE / "apiserver_process.py"), "--work", str(work),
        "--nodes", str(args.agents),
        "--token-review-cache-seconds", str(args.token_review_cache_seconds),
    ]  # fmt: skip
    server, _ = start_until_ready(command, work)
    return server


def start_generators(
    work: Path, args: argparse.Namespace, start_at: float, rate: float | None
) -> list[subprocess.Popen[str]]:
    share, extra = divmod(args.agents, args.generators)
    generators, first = [], 0
    for index in range(args.generators):
        count = share + (1 if index < extra else 0)
        command = [
            sys.executable, str(HERE / "load_agents.py"), "--ready", str(work / READY_FILE),
            "--first", str(first), "--count", str(count), "--start-at", repr(start_at),
            "--warmup", str(args.warmup), "--duration", str(args.duration),
        ]  # fmt: skip
        if rate is not None:
            command += ["--rate", repr(rate * count / args.agents)]
        generators.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
        first += count
    return generators


def cpu_between(before: ProcessReading | None, after: ProcessReading | None) -> float:
    if before is None or after is None:
        raise RuntimeError("a benchmark process ended during the measured window")
    return after.cpu_seconds - before.cpu_seconds


def run_phase(
    work: Path, args: argparse.Namespace, server_pid: int, rate: float | None
) -> dict[str, Any]:
    """One load phase: start the generators, measure the window, gather what they saw."""
    start_at = time.time() + args.connect_seconds
    generators = start_generators(work, args, start_at, rate)
    try:
        time.sleep(max(0.0, start_at + args.warmup - time.time()))
        pids = [server_pid, *(g.pid for g in generators)]
        before = [read_process(pid) for pid in pids]
        time.sleep(args.duration)
        after = [read_process(pid) for pid in pids]
        outputs = [json.loads(g.communicate(timeout=60)[0]) for g in generators]
    finally:
        for generator in generators:
            if generator.poll() is None:
                generator.kill()
    latencies = sorted(value for output in outputs for value in output["latencies"])
    errors: dict[str, int] = {}
    for output in outputs:
        for kind, count in output["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    server_cpu = cpu_between(before[0], after[0])
    generator_cpu = sum(cpu_between(b, a) for b, a in zip(before[1:], after[1:], strict=True))
    return {
        "offered_requests_per_second": rate if rate is not None else "as fast as answered",
        "requests_per_second": round(len(latencies) / args.duration, 1),
        "latency_ms": {
            "p50": round(1000 * percentile(latencies, 0.50), 2),
            "p90": round(1000 * percentile(latencies, 0.90), 2),
            "p99": round(1000 * percentile(latencies, 0.99), 2),
            "max": round(1000 * latencies[-1], 2) if latencies else None,
        },
        "requests_measured": len(latencies),
        "errors": errors,
        "cpu_cores_used": {
            "apiserver": round(server_cpu / args.duration, 2),
            "load_generators": round(generator_cpu / args.duration, 2),
        },
        "apiserver_cpu_ms_per_request": round(1000 * server_cpu / max(1, len(latencies)), 3),
    }


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    facts = machine()
    progress(f"starting the apiserver process with {args.agents} nodes")
    server = start_server(work, args)
    try:
        progress(f"saturation: {args.agents} agents in a closed loop, {args.duration:.0f} s")
        saturation = run_phase(work, args, server.pid, None)
        progress(f"  {saturation['requests_per_second']} requests/s")
        progress(f"paced: {args.rate:.0f} requests/s offered by {args.agents} agents")
        paced = run_phase(work, args, server.pid, args.rate)
        progress(f"  p99 {paced['latency_ms']['p99']} ms")
    finally:
        server.send_signal(signal.SIGTERM)
        server_output, _ = server.communicate(timeout=30)
    server_facts = json.loads(server_output)
    throughput = saturation["requests_per_second"]
    p99_ms = paced["latency_ms"]["p99"]
    return {
        "benchmark": "apiserver_throughput",
        "machine": facts,
        "settings": {
            "simulated_agents": args.agents,
            "generator_processes": args.generators,
            "request": "PUT /bottlerocket-node-resource?view=shadow (the agent's status update)",
            "token_review_cache_seconds": args.token_review_cache_seconds,
            "http_protocol": server_facts["http_protocol"],
            "warmup_seconds": args.warmup,
            "measured_seconds_per_phase": args.duration,
        },
        "saturation": saturation,
        "paced": paced,
        "token_reviews_both_phases": server_facts["token_reviews"],
        "goals": {
            "requests_per_second_at_least": GOAL_REQUESTS_PER_SECOND,
            "p99_ms_under_at_that_rate": GOAL_P99_MS,
            "throughput_met": throughput >= GOAL_REQUESTS_PER_SECOND,
            "p99_met": p99_ms < GOAL_P99_MS,
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--agents", type=int, default=200, help="simulated agents (default 200)")
    parser.add_argument(
        "--generators", type=int, default=2, help="load generator processes (default 2)"
    )
    parser.add_argument("--duration", type=float, default=30.0, help="measured seconds per phase")
    parser.add_argument(
        "--warmup",
        type=float,
        default=5.0,
        help="seconds of load before measuring (first TokenReviews, caches)",
    )
    parser.add_argument(
        "--connect-seconds",
        type=float,
        default=5.0,
        help="time the generators get to start and connect",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=GOAL_REQUESTS_PER_SECOND,
        help="requests/s offered in the paced phase (default 500)",
    )
    parser.add_argument("--token-review-cache-seconds", type=float, default=30.0)
    args = parser.parse_args()
    emit(measure_in_work_dir("brupop-bench-apiserver-", lambda work: measure(args, work)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

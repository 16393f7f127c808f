"""Benchmark: agents waiting. What N agents, each holding the real agent's long-poll open over its
own keep-alive TLS connection, cost one `brupop apiserver` process, and how fast a shadow change
reaches them.

For each N (1,000 / 3,400 / 5,000 by default) it starts `brupop apiserver` over an in-memory
cluster of N agent nodes (waiting_server.py; real TLS, real limits, the in-memory TokenReview) and
the agents (waiting_agents.py, a few processes). Once all wait it reads the server's RSS, and its
CPU over `--idle-seconds`; then it changes one shadow at a time (`--singles` times) and every shadow
at once (`--waves` times, a rollout wave) and times each change, from the write to the cluster to
the agent's answer. It prints one JSON object (kept in bench/results/apiserver_waiting.json).
Loopback only.
"""

from __future__ import annotations

import argparse
import functools
import json
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from ready_file import READY_FILE, START_SECONDS
from rig import emit, machine, mib, percentile, progress, read_process
from work_dir import measure_in_work_dir

HERE = Path(__file__).resolve().parent
AGENTS_PER_PROCESS = 1700
MEMORY_LIMIT_MIB = 256
ANSWER_SECONDS = 10.0  # how long a change may take to reach every agent before it counts as lost


def start_server(work: Path, nodes: int, profile: Path | None) -> subprocess.Popen[str]:
    command = [sys.executable, str(HERE / "waiting_server.py"), "--work", str(work)]
    command += ["--nodes", str(nodes), "--max-connections", str(nodes + 64)]
    if profile is not None:
        command += ["--profile", str(profile_file(profile, nodes))]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_SECONDS * 2
    while not (work / READY_FILE).exists():
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the apiserver process did not start")
        time.sleep(0.05)
    return server


def profile_file(profile: Path, nodes: int) -> Path:
    """Where the server writes its burst profile for a run of `nodes` agents."""
    return profile.with_name(f"{profile.stem}-{nodes}.json")


def start_agents(work: Path, nodes: int, connect_rate: float) -> list[subprocess.Popen[str]]:
    processes = []
    for first in range(0, nodes, AGENTS_PER_PROCESS):
        count = min(AGENTS_PER_PROCESS, nodes - first)
        command = [sys.executable, str(HERE / "waiting_agents.py"), "--ready"]
        command += [str(work / READY_FILE), "--first", str(first), "--count", str(count)]
        command += ["--connect-rate", str(connect_rate)]
        processes.append(
            subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        )
    for process in processes:
        assert process.stdout is not None
        if process.stdout.readline().strip() != "waiting":
            raise RuntimeError("an agents process failed before all its agents waited")
    return processes


def command(server: subprocess.Popen[str], line: str) -> dict[str, list[Any]]:
    """Ask the server process to write shadows; which versions it wrote, and when."""
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(line + "\n")
    server.stdin.flush()
    written: dict[str, list[Any]] = json.loads(server.stdout.readline())
    return written


def latencies(writes: list[dict[str, list[Any]]], answers: dict[str, list[Any]]) -> dict[str, Any]:
    """From each write to the answer carrying its resourceVersion: p50/p99/max ms, and losses."""
    seconds: list[float] = []
    late = never = 0
    for written in writes:
        for name, (version, at) in written.items():
            got = [t for v, t in answers.get(name, []) if v == version]
            if got and got[0] - at <= ANSWER_SECONDS:
                seconds.append(got[0] - at)
            elif got:
                late += 1
            else:
                never += 1  # that version was never answered (a later one was, or none)
    seconds.sort()
    return {
        "changes": len(seconds) + late + never,
        "lost": late + never,
        "late": late,
        "never_answered": never,
        "p50_ms": round(percentile(seconds, 0.5) * 1000, 1),
        "p99_ms": round(percentile(seconds, 0.99) * 1000, 1),
        "max_ms": round(seconds[-1] * 1000, 1) if seconds else None,
    }


def write_span(written: dict[str, list[Any]]) -> float:
    """From the first write of a wave to its last."""
    times = [float(at) for _, at in written.values()]
    return max(times) - min(times)


def measure(work: Path, nodes: int, args: argparse.Namespace) -> dict[str, Any]:
    progress(f"{nodes} waiting agents")
    server = start_server(work, nodes, args.profile)
    agents: list[subprocess.Popen[str]] = []
    try:
        time.sleep(2.0)
        before = read_process(server.pid)
        agents = start_agents(work, nodes, args.connect_rate)
        time.sleep(3.0)  # the last handshakes' garbage collected, the kernel's counters caught up
        idle_start = read_process(server.pid)
        time.sleep(args.idle_seconds)
        idle_end = read_process(server.pid)
        assert before and idle_start and idle_end
        singles = []
        for index in range(args.singles):
            singles.append(command(server, f"one {index * 37 % nodes}"))
            time.sleep(0.3)
        waves, wave_cpu = [], []
        for _ in range(args.waves):
            wave_start = read_process(server.pid)
            waves.append(command(server, "all"))
            time.sleep(ANSWER_SECONDS / 2)
            wave_end = read_process(server.pid)
            assert wave_start and wave_end
            wave_cpu.append(round(wave_end.cpu_seconds - wave_start.cpu_seconds, 2))
        peak = read_process(server.pid)
        assert peak is not None
        authorizations = authorization_outcomes(work)
        answers, errors = stop_agents(agents)
    finally:
        for process in agents:
            process.kill()
        server.send_signal(signal.SIGTERM)
        try:
            server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()
    waiting_kib = idle_end.rss_kib - before.rss_kib
    profiled: dict[str, Any] = {}
    if args.profile is not None:
        profiled["burst_profile"] = json.loads(profile_file(args.profile, nodes).read_text())
    idle_cpu = idle_end.cpu_seconds - idle_start.cpu_seconds
    return {
        "agents": nodes,
        "rss_mib": {
            "before_agents": mib(before.rss_kib),
            "all_waiting": mib(idle_end.rss_kib),
            "peak": mib(peak.peak_rss_kib),
        },
        "kib_per_waiting_agent": round(waiting_kib / nodes, 1),
        "fits_memory_limit": peak.peak_rss_kib / 1024 < MEMORY_LIMIT_MIB,
        "idle_cpu_seconds_per_second": round(idle_cpu / (idle_end.at - idle_start.at), 3),
        "one_shadow_changed": latencies(singles, answers),
        "every_shadow_changed": latencies(waves, answers),
        "wave_write_seconds": [round(write_span(wave), 3) for wave in waves],
        # The server's CPU from each wave's first write to the next (its answers, the agents'
        # next long-polls and the writes themselves, plus the idle re-polls of those 5 s).
        "wave_cpu_seconds": wave_cpu,
        "agent_errors": errors,
        "authorizations": authorizations,
        **profiled,
    }


def authorization_outcomes(work: Path) -> dict[str, int]:
    """The server's authorization decisions by outcome, from its /metrics (reviews, cache hits)."""
    ready = json.loads((work / READY_FILE).read_text())
    context = ssl.create_default_context(cafile=ready["ca"])
    with urllib.request.urlopen(f"{ready['url']}/metrics", context=context, timeout=10) as answer:
        text = answer.read().decode()
    outcomes: dict[str, int] = {}
    for line in text.splitlines():
        if line.startswith("brupop_apiserver_authorizations_total{"):
            labels, _, value = line.rpartition(" ")
            outcome = labels.split('outcome="', 1)[1].split('"', 1)[0]
            outcomes[outcome] = int(float(value))
    return outcomes


def stop_agents(
    agents: list[subprocess.Popen[str]],
) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    answers: dict[str, list[Any]] = {}
    errors: dict[str, Any] = {"once_all_waited": 0, "not_waiting": 0, "connect_seconds": 0.0}
    for process in agents:
        out, _ = process.communicate(input="", timeout=60)
        result = json.loads(out.strip().splitlines()[-1])
        answers.update(result["answers"])
        errors["once_all_waited"] += result["errors_once_waiting"]
        errors["not_waiting"] += result["not_waiting"]
        errors["connect_seconds"] = max(errors["connect_seconds"], result["connect_seconds"])
        for kind, count in result["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    return answers, errors


def main() -> int:
    parser = argparse.ArgumentParser(description="what waiting agents cost the apiserver")
    parser.add_argument("--agents", type=int, nargs="+", default=[1000, 3400, 5000])
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--singles", type=int, default=20)
    parser.add_argument("--waves", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    parser.add_argument(
        "--connect-rate",
        type=float,
        default=400.0,
        help=f"new connections a second from each process of {AGENTS_PER_PROCESS} agents "
        "(a few thousand: a connect storm, past the reviews that may wait)",
    )
    parser.add_argument(
        "--profile", type=Path, help="sample the server in each burst (PROFILE-N.json per N)"
    )
    args = parser.parse_args()
    result: dict[str, Any] = {
        "benchmark": "apiserver_waiting",
        "machine": machine(),
        "settings": {
            "wait_seconds": 30,
            "idle_seconds": args.idle_seconds,
            "single_changes": args.singles,
            "waves": args.waves,
            "connect_rate_per_process": args.connect_rate,
            "memory_limit_mib": MEMORY_LIMIT_MIB,
        },
        "runs": [],
    }
    for nodes in args.agents:
        run = functools.partial(measure, nodes=nodes, args=args)
        result["runs"].append(measure_in_work_dir(f"waiting-{nodes}", run))
    emit(result)
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

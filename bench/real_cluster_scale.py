#!/usr/bin/env python3
"""Benchmark: brupop on the real control plane (scripts/control-plane: etcd, kube-apiserver,
kwok Nodes), with N simulated agents (bench/real_cluster/agent_load.py) and a few real ones.

    bench/real_cluster_scale.py --nodes 10000 --idle-seconds 600 --no-rollout

It measures an idle window (kube-apiserver's request and watch counters, brupop's own requests
from the audit log by user, the controller's CPU per pass and RSS, each apiserver replica's RSS
and connections), a few single changes, a relist, etcd's size, and a rollout at 10%; prints one
JSON object with each goal judged, and writes it to bench/results/real_cluster_scale_<N>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_cluster import figures, goals, proc_stats, readings, scrape
from real_cluster.changes import TICK_SECONDS, one_changes, rollout
from real_cluster.counters import processes, snapshot, wait_for_leader, window
from real_cluster.session import Session, control_plane_down, control_plane_up
from real_cluster.shadow_watch import ShadowWatch
from rig import emit, machine

RESULTS = Path(__file__).resolve().parent / "results"
NO_AUDIT = "unavailable: a reused control plane has no audit log"
MAX_CONCURRENT = "10%"  # the default policy's maxConcurrent for the rollout


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--idle-seconds", type=float, default=600.0)
    parser.add_argument("--rollout", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--kubeconfig", type=Path, help="reuse this control plane (no audit split)")
    parser.add_argument("--real-agents", type=int, default=5)
    parser.add_argument("--controllers", type=int, default=2)
    parser.add_argument("--change-samples", type=int, default=10)
    parser.add_argument("--host-seconds", type=float, default=3.0)
    parser.add_argument("--rollout-timeout", type=float, default=3600.0)
    parser.add_argument("--threads", type=int, default=16, help="setup's parallel requests")
    parser.add_argument("--work", type=Path, help="default: a new folder under /tmp")
    parser.add_argument(
        "--resync-seconds",
        type=float,
        help="the controllers' CONTROLLER_RESYNC_SECONDS (default: the product's, 600), so that"
        " a shorter idle window holds resyncs",
    )
    return parser.parse_args(argv)


def audit(session: Session, cp: Path | None, start: float, end: float) -> Any:
    log = cp / "audit" / "audit.log" if cp else None
    if log is None or not log.exists():
        return None
    with log.open() as lines:
        return scrape.audit_counts(lines, start, end)


def run(args: argparse.Namespace, work: Path, cp: Path | None, kubeconfig: Path) -> dict[str, Any]:
    """Set up, measure, and stop everything this run started (whatever failed on the way)."""
    session = Session.open(kubeconfig, work)
    try:
        watch = ShadowWatch(session.access)
        try:
            measured = measure(args, session, watch, cp)
        finally:
            watch.stop()
    finally:
        session.close()
    return report(args, session, watch, measured)


def measure(
    args: argparse.Namespace, session: Session, watch: ShadowWatch, cp: Path | None
) -> dict[str, Any]:
    """Every raw reading of the run, in the order taken."""
    began = time.monotonic()
    session.install_chart()
    session.build_fleet(args.nodes, args.real_agents, batch=1000, threads=args.threads)
    session.write_policy(MAX_CONCURRENT)
    resync = {"CONTROLLER_RESYNC_SECONDS": str(args.resync_seconds)} if args.resync_seconds else {}
    session.start_brupop(3, args.controllers, resync)
    wait_for_leader(session)
    watch.start()
    session.start_agents(args.host_seconds, ready_seconds=max(120.0, args.nodes / 10))
    m: dict[str, Any] = {"setup": time.monotonic() - began}
    time.sleep(10.0)  # the first reports settle; token reviews are cached
    m["before"] = snapshot(session)
    time.sleep(args.idle_seconds)
    m["after"] = snapshot(session)
    m["idle"] = window(m["before"], m["after"])
    m["apiservers"] = processes(session)
    m["leader_rss"] = proc_stats.rss_mib(m["after"]["leader_pid"])
    leader = [c for c in session.brupop.controllers if c.pid == m["after"]["leader_pid"]]
    m["leader_lists"] = readings.informer_lists(leader[0].log) if leader else None
    m["audit"] = audit(session, cp, m["before"]["at"], m["after"]["at"])
    m["change_ms"] = one_changes(session, args.change_samples, m["idle"])
    m["relist"] = readings.relist_costs(session.access)
    m["rollout"] = rollout(session, watch, args.rollout_timeout) if args.rollout else None
    m["tallies"] = session.stop_agents()
    m["etcd"] = etcd_size(cp)
    return m


def report(
    args: argparse.Namespace, session: Session, watch: ShadowWatch, m: dict[str, Any]
) -> dict[str, Any]:
    """The run's JSON: figures from the raw readings, and each goal judged."""
    idle, tallies, rolled = m["idle"], m["tallies"], m["rollout"]
    no_split = {"brupop_requests_per_second": None, "client_split": NO_AUDIT}
    split = figures.brupop_load(m["audit"], idle["seconds"], args.nodes) if m["audit"] else no_split
    load = idle | split
    load["client_split_method"] = "kube-apiserver audit log (Metadata level, brupop's accounts)"
    seen = [tuple(s) for t in tallies for s in t["seen"]]
    delays = figures.spec_seen_delays(seen, watch.spec_seen)
    generated: dict[str, float] = {}
    generated_2xx = 0.0
    for tally in tallies:
        window = m["before"]["at"], m["after"]["at"]
        counts = figures.requests_in(tally["per_second"], *window)
        for kind, count in counts.items():
            generated[kind] = generated.get(kind, 0) + count
        generated_2xx += sum(figures.requests_in(tally.get("answered_2xx", {}), *window).values())
    real_total = idle["brupop_apiserver_requests"] - generated_2xx
    setup = m["setup"]
    result: dict[str, Any] = {
        "benchmark": "real_cluster_scale",
        "nodes": args.nodes,
        "machine": machine(),
        "command": command_line(sys.argv[1:]),
        "setup_seconds": {
            **session.setup_seconds,
            "total": round(setup, 1),
            "per_1000_nodes": round(setup * 1000 / max(1, args.nodes), 1),
        },
        "kube_apiserver_load": load,
        "controller": controller_figures(args, m),
        "apiserver_replicas": m["apiservers"],
        "spec_change_seen_seconds": {
            "samples": len(delays),
            "p50": figures.percentile(delays, 0.5),
            "p99": figures.percentile(delays, 0.99),
            "max": max(delays, default=None),
            "method": "agent's wall time of first sight less the admin watch's first sight",
        },
        "relist": m["relist"],
        "etcd_db_bytes": m["etcd"],
        "requests_per_agent_per_minute": {
            "generator": figures.per_agent_per_minute(generated, args.nodes, idle["seconds"]),
            "real_agents": figures.per_agent_per_minute(
                {"all": real_total}, args.real_agents, idle["seconds"]
            ),
            "generator_all": round(
                sum(generated.values()) * 60 / idle["seconds"] / max(1, args.nodes), 3
            ),
            "method": "real agents: the replicas' brupop_apiserver_requests_total answered 2xx"
            " less the generator's 2xx answers, in the idle window",
        },
        "generator_errors": {k: v for t in tallies for k, v in t["errors"].items()},
        "rollout": rolled,
    }
    result["goals"] = goals.judge(result, base_memory(args.nodes))
    return result


def controller_figures(args: argparse.Namespace, m: dict[str, Any]) -> dict[str, Any]:
    """The leader's RSS and CPU: of its loop thread's ticks (the goal) and of the process."""
    idle, rolled = m["idle"], m["rollout"]
    changes = m["change_ms"]
    touched = changes.get("shadow_touched") or {}
    return {
        "replicas": args.controllers,
        "rss_mib": round(m["leader_rss"], 1),
        "quiet_pass_cpu_ms": quiet_pass_ms(idle),
        "idle_ticks": figures.tick_shares(idle.get("ticks_by_cpu_bucket", {})),
        "one_change_cpu_ms": touched.get("pass_cpu_ms"),
        "one_change_kinds": changes,
        "mid_rollout_pass_cpu_ms": rolled["mid_rollout_pass_cpu_ms"] if rolled else None,
        "ticks_per_second_idle": round(idle["ticks"] / idle["seconds"], 3),
        "resync_seconds": args.resync_seconds or 600.0,
        "informer_lists": m["leader_lists"],
        "process_cpu_ms_per_2s_idle": round(
            idle["leader_cpu_seconds"] * 1000 * TICK_SECONDS / idle["seconds"], 3
        ),
        "cpu_method": "pass: the loop thread's CPU per tick (time.thread_time around tick(),"
        " brupop_controller_pass_cpu_seconds); one change: the ticks' CPU over 2 ticks after"
        " one shadow's change less as many quiet ticks (the goal's figure: a change the"
        " controller decides on again and writes nothing for; also a report of an update, which"
        " starts the node). process: the leader's /proc CPU (watch threads decoding events,"
        " Lease renewals, /metrics scrapes) per 2 s",
    }


def base_memory(nodes: int) -> float | None:
    """A replica's RSS (default malloc, 90 s after listening) from the kept
    `real_cluster_base_memory_<nodes>.json`, when there is one."""
    path = RESULTS / f"real_cluster_base_memory_{nodes}.json"
    try:
        readings = json.loads(path.read_text())["rss_mib_after_listening"]
        return float(readings["90s"]["default"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def quiet_pass_ms(idle: dict[str, Any]) -> float | None:
    """The quiet ticks' mean CPU, bounded from above: the idle window's ticks above 100 ms (a
    full resync, every `CONTROLLER_RESYNC_SECONDS`, which at 10,000 nodes takes seconds) are
    no quiet pass, and the histogram keeps only counts per bucket and one sum."""
    cumulative = idle.get("ticks_by_cpu_bucket") or {}
    if not cumulative:
        return figures.pass_cpu_ms(idle["ticks"], idle["ticks_cpu_seconds"])
    return figures.quiet_tick_bound_ms(cumulative, idle["ticks_cpu_seconds"])


def command_line(argv: list[str]) -> str:
    """The run's command, without its work folder (a path of this machine)."""
    kept = [a for i, a in enumerate(argv) if a != "--work" and (i == 0 or argv[i - 1] != "--work")]
    return " ".join(["bench/real_cluster_scale.py", *kept])


def etcd_size(cp: Path | None) -> float | None:
    if cp is None:
        return None
    port = json.loads((cp / "ports.json").read_text())["etcd_client"]
    return scrape.single(readings.http_text(f"http://127.0.0.1:{port}/metrics"),
                         "etcd_mvcc_db_total_size_in_bytes")  # fmt: skip


def main(argv: list[str]) -> int:
    args = parse(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="brupop-real-scale-"))
    cp = None if args.kubeconfig else work / "control-plane"
    kubeconfig = args.kubeconfig or control_plane_up(work / "control-plane")
    try:
        result = run(args, work, cp, kubeconfig)
    finally:
        if cp is not None:
            control_plane_down(cp)
    emit(result, RESULTS / f"real_cluster_scale_{args.nodes}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

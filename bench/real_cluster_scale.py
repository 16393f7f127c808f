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
from real_cluster.session import Session, control_plane_down, control_plane_up
from real_cluster.shadow_watch import ShadowWatch
from rig import machine

RESULTS = Path(__file__).resolve().parent / "results"
TICK_SECONDS = 2.0  # the controller's default CONTROLLER_TICK_SECONDS
NO_AUDIT = "unavailable: a reused control plane has no audit log"
REQUESTS = ("apiserver_request_total", ("verb", "resource", "subresource"))


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
    return parser.parse_args(argv)


def snapshot(session: Session) -> dict[str, Any]:
    """Every counter the windows are differences of, at one moment."""
    text = readings.kube_metrics(session.access)
    leader = next(p for p in session.brupop.controllers if _leads(p.port))
    return {
        "at": time.time(),
        "requests": scrape.samples(text, REQUESTS[0], REQUESTS[1]),
        "watch_events": scrape.samples(text, "apiserver_watch_events_total", ("resource",)),
        "apiserver_requests": sum(
            sum(
                scrape.samples(
                    readings.http_text(f"{url}/metrics", str(session.tls.ca_cert)),
                    "brupop_apiserver_requests_total",
                    (),
                ).values()
            )
            for url in session.urls
        ),
        "leader_pid": leader.pid,
        "leader_cpu": proc_stats.cpu_seconds(leader.pid),
    }


def _leads(port: int) -> bool:
    text = readings.http_text(f"http://127.0.0.1:{port}/metrics")
    return scrape.single(text, "brupop_controller_leader") >= 1


def wait_for_leader(session: Session, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not any(_leads(p.port) for p in session.brupop.controllers):
        if time.monotonic() > deadline:
            raise RuntimeError("no controller replica leads")
        time.sleep(1.0)


def window(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    seconds = after["at"] - before["at"]
    requests = scrape.delta(after["requests"], before["requests"])
    events = scrape.delta(after["watch_events"], before["watch_events"])
    return {
        "seconds": round(seconds, 1),
        "all_clients_requests_per_second": round(sum(requests.values()) / seconds, 2),
        "all_clients_by_verb_resource_per_second": {
            " ".join(filter(None, k)): round(v / seconds, 3)
            for k, v in sorted(requests.items(), key=lambda i: -i[1])
        },
        "watch_events_per_second": round(sum(events.values()) / seconds, 3),
        "watch_events_by_resource_per_second": {
            k[0]: round(v / seconds, 3) for k, v in events.items()
        },
        "leader_cpu_seconds": after["leader_cpu"] - before["leader_cpu"],
        "brupop_apiserver_requests": after["apiserver_requests"] - before["apiserver_requests"],
    }


def audit(session: Session, cp: Path | None, start: float, end: float) -> Any:
    log = cp / "audit" / "audit.log" if cp else None
    if log is None or not log.exists():
        return None
    with log.open() as lines:
        return scrape.audit_counts(lines, start, end)


def processes(session: Session) -> dict[str, Any]:
    return {
        p.name: {"rss_mib": round(proc_stats.rss_mib(p.pid), 1),
                 "connections": proc_stats.connections(p.pid, p.port)}
        for p in session.brupop.apiservers
    }  # fmt: skip


def one_changes(session: Session, samples: int, quiet_cpu_per_second: float) -> float | None:
    """CPU ms of the leader per single change: `samples` agents' reports of an update, one
    every two passes, less the quiet cost of the same time."""
    if samples <= 0:
        return None
    from kubernetes.client import CustomObjectsApi

    from brupop.adapters.kubernetes.shadow_objects import GROUP, PLURAL, VERSION
    from brupop.domain.shadow import shadow_name

    api = CustomObjectsApi(session.access.admin)
    status = {"current_version": "1.0.0", "target_version": "1.1.0", "current_state": "Idle",
              "crash_count": 0}  # fmt: skip
    before = snapshot(session)
    for node in session.nodes[:samples]:
        api.patch_namespaced_custom_object_status(
            GROUP, VERSION, "brupop-bottlerocket-aws", PLURAL, shadow_name(node.name),
            {"status": status},
        )  # fmt: skip
        time.sleep(2 * TICK_SECONDS)
    spent = window(before, snapshot(session))
    extra = spent["leader_cpu_seconds"] - quiet_cpu_per_second * spent["seconds"]
    return round(max(0.0, extra) * 1000 / samples, 3)


def rollout(session: Session, watch: ShadowWatch, timeout: float) -> dict[str, Any]:
    names = {n.name for n in session.nodes}
    limit = max(1, (len(session.nodes) + len(session.real_nodes)) // 10)
    watch.reset_peak()
    before, began = snapshot(session), time.monotonic()
    (session.control / "rollout").touch()
    while not watch.finished(names, "1.1.0") and time.monotonic() - began < timeout:
        time.sleep(2.0)
    spent = window(before, snapshot(session))
    completed = watch.finished(names, "1.1.0")
    passes = spent["seconds"] / TICK_SECONDS
    result = {
        "completed": completed, "seconds": round(time.monotonic() - began, 1), "limit": limit,
        "max_in_progress": watch.max_updating,
        "mid_rollout_pass_cpu_ms": round(spent["leader_cpu_seconds"] * 1000 / passes, 3),
        "watch_events_per_second": spent["watch_events_per_second"],
        "all_clients_requests_per_second": spent["all_clients_requests_per_second"],
    }  # fmt: skip
    if not completed:
        left = sum(1 for n in names if watch.states.get(n, ("",))[0:1] != ("Idle",))
        result["cause"] = f"{left} nodes not back to Idle on 1.1.0 after {timeout:g} s"
    return result


def ten_percent(args: argparse.Namespace) -> int:
    """maxConcurrent 10% of the fleet, as the whole number MAX_CONCURRENT_UPDATE takes."""
    return max(1, (args.nodes + args.real_agents) // 10)


def run(args: argparse.Namespace, work: Path, cp: Path | None, kubeconfig: Path) -> dict[str, Any]:
    began = time.monotonic()
    session = Session.open(kubeconfig, work)
    watch = ShadowWatch(session.access)
    try:
        session.install_chart()
        session.build_fleet(args.nodes, args.real_agents, batch=1000, threads=args.threads)
        session.start_brupop(3, args.controllers, str(ten_percent(args)))
        wait_for_leader(session)
        watch.start()
        session.start_agents(args.host_seconds, ready_seconds=max(120.0, args.nodes / 20))
        setup = time.monotonic() - began
        time.sleep(10.0)  # the first reports settle; token reviews are cached
        before = snapshot(session)
        time.sleep(args.idle_seconds)
        after = snapshot(session)
        idle = window(before, after)
        brupop_rss = processes(session)
        leader_rss = proc_stats.rss_mib(after["leader_pid"])
        quiet_cpu = idle["leader_cpu_seconds"] / idle["seconds"]
        counted = audit(session, cp, before["at"], after["at"])
        no_split = {"brupop_requests_per_second": None, "client_split": NO_AUDIT}
        split = figures.brupop_load(counted, idle["seconds"], args.nodes) if counted else no_split
        load = idle | split
        load["client_split_method"] = (
            "kube-apiserver audit log (Metadata level, brupop's ServiceAccounts)"
        )
        change_ms = one_changes(session, args.change_samples, quiet_cpu)
        relisted = readings.relist_costs(session.access)
        rolled = rollout(session, watch, args.rollout_timeout) if args.rollout else None
        tallies = session.stop_agents()
        etcd = etcd_size(cp)
    finally:
        watch.stop()
        session.close()
    seen = [tuple(s) for t in tallies for s in t["seen"]]  # type: ignore[attr-defined]
    delays = figures.spec_seen_delays(seen, watch.spec_seen)  # type: ignore[arg-type]
    generated: dict[str, float] = {}
    for tally in tallies:
        for kind, count in figures.requests_in(
            tally["per_second"], before["at"], after["at"]
        ).items():  # type: ignore[arg-type]
            generated[kind] = generated.get(kind, 0) + count
    real_total = idle["brupop_apiserver_requests"] - sum(generated.values())
    result: dict[str, Any] = {
        "benchmark": "real_cluster_scale",
        "nodes": args.nodes,
        "machine": machine(),
        "setup_seconds": {
            **session.setup_seconds,
            "total": round(setup, 1),
            "per_1000_nodes": round(setup * 1000 / max(1, args.nodes), 1),
        },
        "kube_apiserver_load": load,
        "controller": {
            "replicas": args.controllers,
            "rss_mib": round(leader_rss, 1),
            "quiet_pass_cpu_ms": round(quiet_cpu * TICK_SECONDS * 1000, 3),
            "one_change_cpu_ms": change_ms,
            "mid_rollout_pass_cpu_ms": rolled["mid_rollout_pass_cpu_ms"] if rolled else None,
            "cpu_method": "leader's process CPU (/proc) over the window / (window / 2 s tick);"
            " one change: extra CPU over 2 ticks after one shadow's status report, less quiet",
        },
        "apiserver_replicas": brupop_rss,
        "spec_change_seen_seconds": {
            "samples": len(delays),
            "p50": figures.percentile(delays, 0.5),
            "p99": figures.percentile(delays, 0.99),
            "max": max(delays, default=None),
            "method": "agent's wall time of first sight less the admin watch's first sight",
        },
        "relist": relisted,
        "etcd_db_bytes": etcd,
        "requests_per_agent_per_minute": {
            "generator": figures.per_agent_per_minute(generated, args.nodes, idle["seconds"]),
            "real_agents": figures.per_agent_per_minute(
                {"all": real_total}, args.real_agents, idle["seconds"]
            ),
            "generator_all": round(
                sum(generated.values()) * 60 / idle["seconds"] / max(1, args.nodes), 3
            ),
            "method": "real agents: the replicas' brupop_apiserver_requests_total less the"
            " generator's own count",
        },
        "generator_errors": {k: v for t in tallies for k, v in t["errors"].items()},  # type: ignore[attr-defined]
        "rollout": rolled,
    }
    result["goals"] = goals.judge(result)
    return result


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
    text = json.dumps(result, indent=2, default=str)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"real_cluster_scale_{args.nodes}.json").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

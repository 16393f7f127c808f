#!/usr/bin/env python3
"""What brupop's control side spends over a whole rollout on the real control plane: one
controller and one apiserver process over `--nodes` kwok Nodes (limit `--limit`), each Node's
agent a real `brupop agent` whose emulated host offers 1.1.0 and which is started again after
its emulated reboot; every interval at the product's defaults (the original's).

    bench/rollout_cost.py --nodes 6 --limit 2

Reports the controller's and the apiserver's CPU (user + sys from /proc; the apiserver's with
its children) from the agents' start until every shadow is Idle on 1.1.0, that wall time, and
the watches brupop holds open at the end (kube-apiserver's audit log). Prints one JSON object
and writes it to bench/results/rollout_cost.json (or --out).

Every run keeps the brupop processes' logs (the controller's at debug) and the audit log in
--logs (a new folder unless given), and samples the controller's passes over the run, so a run
whose controller passes many times a second shows when that began, with the watch events and
brupop's requests of its busiest window.
"""

from __future__ import annotations

import argparse
import io
import os
import pstats
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from apiserver_idle_cost import family_reading
from real_cluster import fleet, proc_stats, readings, scrape, thread_profile
from real_cluster.brupop_processes import APISERVER_ACCOUNT, CONTROLLER_ACCOUNT
from real_cluster.counters import wait_for_leader
from real_cluster.pass_timeline import PassTimeline
from real_cluster.rebooting_agents import TARGET, RebootingAgents
from real_cluster.session import Session, control_plane_down, control_plane_up
from real_cluster.shadow_watch import ShadowWatch
from rig import emit, machine

RESULTS = Path(__file__).resolve().parent / "results"
_PREFIX = re.compile(r"\S*/(src|site-packages|python3\.\d+)/")  # this machine's folders
USERS = [
    f"system:serviceaccount:{fleet.NAMESPACE}:{account}"
    for account in (CONTROLLER_ACCOUNT, APISERVER_ACCOUNT)
]


def cpu(pids: dict[str, int]) -> dict[str, float]:
    """The controller's CPU seconds, and the apiserver's with its children."""
    return {
        "controller": proc_stats.cpu_seconds(pids["controller"]),
        "apiserver": family_reading(pids["apiserver"])["cpu"],
    }


def pass_cpu(port: int) -> tuple[float, float]:
    """The controller's passes so far and their CPU seconds (its loop thread's own metric)."""
    text = readings.http_text(f"http://127.0.0.1:{port}/metrics")
    return (
        scrape.single(text, "brupop_controller_pass_cpu_seconds_count"),
        scrape.single(text, "brupop_controller_pass_cpu_seconds_sum"),
    )


def watch_events(session: Session) -> dict[tuple[str, ...], float]:
    """Watch events kube-apiserver has sent so far, by resource (to every client: a burst of
    Node or shadow events shows here whoever caused it)."""
    text = readings.kube_metrics(session.access)
    return scrape.samples(text, "apiserver_watch_events_total", ("resource",))


def audit_figures(cp: Path | None, start: float, end: float) -> dict[str, Any] | None:
    """From the audit log: brupop's watches open now, by account and resource, and its
    requests in [start, end) by account, verb and resource (a watch counted when opened)."""
    log = cp / "audit" / "audit.log" if cp else None
    if log is None or not log.exists():
        return None
    with log.open() as lines:
        held = scrape.open_watches(lines, USERS)
    with log.open() as lines:
        sent = scrape.audit_counts(lines, start, end)
    return {
        "open_watches": sum(held.values()),
        "open_watches_by_account_resource": {
            f"{user.rsplit(':', 1)[1]} {resource}": count
            for (user, resource), count in sorted(held.items())
        },
        "requests_by_account_verb_resource": {
            f"{user.rsplit(':', 1)[1]} {verb} {resource}": count
            for (user, verb, resource), count in sorted(sent.items(), key=lambda i: -i[1])
            if user in USERS
        },
    }


def rollout(session: Session, args: argparse.Namespace, cp: Path | None) -> dict[str, Any]:
    """Start the agents and measure until every node is Idle on the new version."""
    controller, apiserver = session.brupop.controllers[0], session.brupop.apiservers[0]
    pids = {"controller": controller.pid, "apiserver": apiserver.pid}
    names = {n.name for n in session.real_nodes}
    watch = ShadowWatch(session.access)
    agents = RebootingAgents(
        session.real_nodes, session.urls, session.tls.ca_cert, session.work, args.reboot_seconds
    )
    timeline = PassTimeline(
        controller.port, controller.pid, lambda: watch_events(session), args.sample_seconds
    )
    watch.start()
    try:
        timeline.start()
        first, passes = cpu(pids), pass_cpu(controller.port)
        events = watch_events(session)
        began, wall_began = time.monotonic(), time.time()
        agents.start()
        while not watch.finished(names, TARGET):
            if time.monotonic() - began > args.timeout:
                raise RuntimeError(f"not every node on {TARGET} after {args.timeout:g} s")
            time.sleep(0.5)
        seconds = time.monotonic() - began
        timeline.stop()  # the rollout's passes only, not the readings' seconds that follow
        last, passes_after = cpu(pids), pass_cpu(controller.port)
        events = scrape.delta(watch_events(session), events)
        passes_seen = timeline.summary()
        audit = audit_figures(cp, wall_began, time.time())
        busiest = passes_seen.get("busiest_window")
        if busiest and cp is not None:  # what brupop asked of kube-apiserver meanwhile
            began_at = wall_began + busiest["began_after_seconds"]
            window = audit_figures(cp, began_at, began_at + busiest["seconds"])
            busiest["requests_by_account_verb_resource"] = (
                window["requests_by_account_verb_resource"] if window else None
            )
    finally:
        timeline.stop()
        agents.stop()
        watch.stop()
    starts = sorted(t - wall_began for (_, state), t in watch.spec_seen.items() if state != "Idle")
    return {
        "seconds": round(seconds, 1),
        "first_node_started_after_seconds": round(starts[0], 1) if starts else None,
        "max_in_progress": watch.max_updating,
        "agent_starts": dict(sorted(agents.starts.items())),
        "controller_cpu_seconds": round(last["controller"] - first["controller"], 3),
        "apiserver_cpu_seconds": round(last["apiserver"] - first["apiserver"], 3),
        "controller_passes": passes_after[0] - passes[0],
        "controller_pass_cpu_seconds": round(passes_after[1] - passes[1], 3),
        "controller_passes_over_time": passes_seen,
        "watch_events_sent_by_resource": {key[0]: count for key, count in events.items()},
        "audit": audit,
        "controller_rss_mib": round(proc_stats.rss_mib(controller.pid), 1),
    }


def profile_top(path: Path, count: int = 25) -> dict[str, list[str]]:
    """The profile's functions by CPU of their own, and brupop's by CPU with their callees
    (all threads merged; the whole process life, its start included)."""
    listings = {}
    for order, only in (("tottime", ""), ("cumulative", "brupop/")):
        out = io.StringIO()
        stats = pstats.Stats(str(path), stream=out).sort_stats(order)
        stats.print_stats(*filter(None, [only]), count)
        lines = out.getvalue().splitlines()[1:]  # not the first: the profile file's name
        listings[order] = [_PREFIX.sub("", line) for line in lines if line.strip()]
    return listings


def keep_logs(work: Path, cp: Path | None, logs: Path) -> None:
    """Copy the brupop processes' logs and kube-apiserver's audit log to `logs`."""
    logs.mkdir(parents=True, exist_ok=True)
    for log in sorted((work / "brupop").glob("*.log")):
        shutil.copy(log, logs / log.name)
    audit = cp / "audit" / "audit.log" if cp else None
    if audit is not None and audit.exists():
        shutil.copy(audit, logs / "audit.log")
    print(f"logs kept in {logs}", file=sys.stderr)


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    cp = None if args.kubeconfig else work / "control-plane"
    profile = work / "controller.prof"
    if args.profile:  # the controller's threads under cProfile: its CPU figure is inflated
        site = thread_profile.write_site(work / "profile-site", "controller", profile)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(site), os.environ.get("PYTHONPATH")])
        )
    try:
        kubeconfig = args.kubeconfig or control_plane_up(work / "control-plane")
        session = Session.open(kubeconfig, work)
        try:
            session.install_chart()
            session.build_fleet(0, args.nodes, batch=1000, threads=4)
            session.write_policy(str(args.limit) if args.policy_limit_as_text else args.limit)
            session.start_brupop(1, args.controllers, {"TRACING_FILTER_DIRECTIVE": args.log_level})
            wait_for_leader(session)
            fleet.wait_pods_running(session.access, args.nodes, 120.0)
            time.sleep(args.settle_seconds)
            load_before = os.getloadavg()
            figures = rollout(session, args, cp)
        finally:
            session.close()
    finally:
        if cp is not None:
            control_plane_down(cp)
        keep_logs(work, cp, args.logs)
    return {
        "benchmark": "rollout_cost",
        "profiled": args.profile,
        "controller_profile_top": profile_top(profile) if profile.exists() else None,
        "nodes": args.nodes,
        "limit": args.limit,
        "machine": machine(),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "rollout": figures,
        "method": "1 controller and 1 apiserver process (PYTHONOPTIMIZE=2, nice 5) at the"
        " product's default intervals (controller tick 2 s; agent loop 5 s, apiclient 1 call"
        " per 10 s after a burst of 2), real agents with the host emulator's default host work"
        f" (refresh 0.2 s, prepare 0.5 s, activate 0.2 s), started again {args.reboot_seconds:g} s"
        " after each emulated reboot; CPU: /proc utime+stime from the agents' start until every"
        " shadow is Idle on 1.1.0 (the apiserver with its children); open watches: kube-apiserver"
        " audit log, watches of brupop's accounts started and not completed at the end;"
        f" passes over time: the controller's /metrics read every {args.sample_seconds:g} s"
        " (its CPU includes serving those reads)",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=6)
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--reboot-seconds", type=float, default=1.0)
    parser.add_argument("--settle-seconds", type=float, default=10.0)
    parser.add_argument("--timeout", type=float, default=1200.0)
    parser.add_argument("--kubeconfig", type=Path, help="reuse this control plane (no audit)")
    parser.add_argument("--profile", action="store_true", help="cProfile the controller")
    parser.add_argument("--out", type=Path, default=RESULTS / "rollout_cost.json")
    parser.add_argument("--keep", type=Path, help="work here and keep everything")
    parser.add_argument(
        "--sample-seconds", type=float, default=2.0, help="between two readings of the passes"
    )
    parser.add_argument(
        "--policy-limit-as-text", action="store_true", help='write maxConcurrent as "2"'
    )
    parser.add_argument("--controllers", type=int, default=1, help="replicas (the first measured)")
    parser.add_argument("--logs", type=Path, help="keep the logs here (default: a new folder)")
    parser.add_argument(
        "--log-level", default="debug", help="the controller's TRACING_FILTER_DIRECTIVE"
    )
    args = parser.parse_args()
    args.logs = args.logs or Path(tempfile.mkdtemp(prefix="brupop-rollout-cost-logs-"))
    if args.keep:
        args.keep.mkdir(parents=True)
        result = measure(args, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="brupop-rollout-cost-") as folder:
            result = measure(args, Path(folder))
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark 2, controller scale: the CPU cost of the controller's passes, and resident memory,
with 1,000, 5,000 and 10,000 shadows in the in-memory cluster, idle and mid-rollout, plus the
cost of decoding a real cluster's lists and watch events at 10,000.

Each (size, phase) runs in a fresh process, so its memory figures are its own. It measures,
as the leader, with `time.process_time()` around `ControllerService.tick()`:
- the first pass (the mirror is filled by one list; every shadow decided and explained);
- passes with nothing changed (the steady state: a tick with no event);
- passes after one agent's report that calls for a spec write (mid-rollout only), the write
  included;
- full resyncs (list the resourceVersions of every shadow and Node, compare them with the
  mirror's and read again what differs; only shadows that changed are decided again), and
  apart from them, a full recomputation (every shadow decided again, which no pass does: it
  is the cost a resync would have if it did).
As a control for the per-shadow growth, it also times `decision.decide` alone over the facts
the controller's book holds, and over facts taken again from the same shadows decoded one
after another (the memory layout a fresh list from the apiserver gives): the code is the
same, only where the objects lie in memory differs.
The `kube-replay` case feeds the real Kubernetes adapters recorded-shape JSON (see
kube_replay.py): one list of 10,000 shadows, one of 10,000 Nodes, five resyncs of each by
versions (lists of metadata only, as the adapters ask for them), 10,000 watch events.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rig import NAMESPACE, emit, machine, mib, own_rss_kib, progress, send_logs_to

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.decision import decide
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.rollout.shadow_facts import ShadowFacts
from brupop.domain.shadow import (
    OPT_IN_LABEL,
    OPT_IN_VALUE,
    Shadow,
    ShadowSpec,
    ShadowStatus,
    shadow_name,
)
from brupop.domain.states import UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import build_controller
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.service import ControllerService

HERE = Path(__file__).resolve()
FROM_VERSION = "1.19.0"
TO_VERSION = "1.20.0"
GOALS_AT_10000 = {  # CPU ms (issue 15)
    "unchanged_pass_cpu_ms": 5.0,
    "one_changed_pass_cpu_ms": 2.0,
    "full_resync_cpu_ms": 50.0,
}
GOAL_PER_SHADOW_GROWTH = 1.3  # per-shadow cost at 10k over 1k
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


def _controller(cluster: InMemoryCluster, limit: int) -> ControllerService:
    config = ControllerConfig(
        rollout_rules=RolloutRules(limit=ConcurrencyLimit(limit)),
        window=MaintenanceWindow.starting("* * * * * * *", now=cluster.clock.now()),
        namespace=NAMESPACE,
        identity="brupop-controller-bench",
    )
    return build_controller(cluster, config, cluster.clock)


def _cpu_ms(action: Callable[[], object]) -> float:
    started = time.process_time()
    action()
    return 1000 * (time.process_time() - started)


def _summary(samples: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(samples), 3),
        "min": round(min(samples), 3),
        "max": round(max(samples), 3),
    }


def _agent_reaches_its_spec(cluster: InMemoryCluster, round_: int) -> None:
    """One agent reports the state its spec asks for (outside the measured time)."""
    busy = [
        s
        for s in cluster.shadows.store.values()
        if s.status is not None and s.status.current_state != s.spec.state
    ]
    shadow = sorted(busy, key=lambda s: s.name)[round_ % len(busy)]
    assert shadow.status is not None
    state = shadow.spec.state
    current = shadow.status.current_version
    if state is UpdateState.REBOOTED_INTO_UPDATE:
        current = TO_VERSION
    status = shadow.status.model_copy(update={"current_state": state, "current_version": current})
    cluster.shadows.update_status(shadow.name, status)


def _decide_by_layout(controller: ControllerService, now: datetime) -> dict[str, float]:
    """CPU ms of `decide` over every shadow the controller holds, from the facts the book
    holds (taken when each shadow was recorded, between other objects) and from facts taken
    again from the same shadows decoded one after another (as a fresh list lays them out);
    the median of 9 rounds each."""
    book = controller.fleet.book
    held = [f for n in book.names() if (f := book.facts(n)) is not None]
    models = [s for n in book.names() if (s := book.shadow(n)) is not None]
    timeouts = controller.config.rollout_rules.timeouts
    fresh = [
        ShadowFacts.of(Shadow.model_validate_json(s.model_dump_json()), timeouts) for s in models
    ]

    def over(facts: list[ShadowFacts]) -> Callable[[], None]:
        def run() -> None:
            for one in facts:
                decide(one, now)

        return run

    return {
        "held": round(statistics.median(_cpu_ms(over(held)) for _ in range(9)), 3),
        "fresh": round(statistics.median(_cpu_ms(over(fresh)) for _ in range(9)), 3),
    }


def one(size: int, phase: str, limit: int, passes: int, log: Path) -> dict[str, Any]:
    """Measure one (size, phase) in this process."""
    send_logs_to(log)
    cluster = InMemoryCluster(NAMESPACE)
    baseline_kib, _ = own_rss_kib()
    populate(cluster, size, phase, limit)
    controller = _controller(cluster, limit)
    first = _cpu_ms(controller.tick)  # leader election, fill, every node decided and explained
    writes_before = cluster.revisions.last
    unchanged = [_cpu_ms(controller.tick) for _ in range(passes)]
    writes_unchanged = cluster.revisions.last - writes_before
    one_changed: list[float] = []
    if phase == "mid-rollout":
        for round_ in range(passes):
            _agent_reaches_its_spec(cluster, round_)
            one_changed.append(_cpu_ms(controller.tick))
    resyncs, recomputes = [], []
    book = controller.fleet.book
    for _ in range(max(3, passes // 3)):
        controller.request_resync()
        resyncs.append(_cpu_ms(controller.tick))
        recomputes.append(_cpu_ms(lambda: book.redecide(book.names(), cluster.clock.now())))
    rss_kib, peak_kib = own_rss_kib()
    decide_ms = _decide_by_layout(controller, cluster.clock.now())
    result: dict[str, Any] = {
        "shadows": size,
        "phase": phase,
        "passes": passes,
        "first_pass_cpu_ms": round(first, 2),
        "unchanged_pass_cpu_ms": _summary(unchanged),
        "full_resync_cpu_ms": _summary(resyncs),
        "full_recompute_cpu_ms": _summary(recomputes),
        "rss_mib": mib(rss_kib),
        "peak_rss_mib": mib(peak_kib),
        "rss_mib_over_empty_process": mib(rss_kib - baseline_kib),
        "cluster_writes_in_unchanged_passes": writes_unchanged,
        "decide_only_held_cpu_ms": decide_ms["held"],
        "decide_only_fresh_layout_cpu_ms": decide_ms["fresh"],
    }
    if one_changed:
        result["one_changed_pass_cpu_ms"] = _summary(one_changed)
    return result


RESYNCS = 5
"""Resyncs by versions of each kind the replay measures (the median is its figure)."""


def replay(size: int, page_size: int | None = None) -> dict[str, Any]:
    """Decoding a real cluster's answers with the Kubernetes adapters, at `size` objects
    (`page_size`: objects per list request, the adapters' own when None)."""
    import kube_replay  # the kubernetes client only here: it would weigh on the other cases

    from brupop.adapters.kubernetes.api import watching
    from brupop.adapters.kubernetes.resources.nodes import KubernetesNodeRepository
    from brupop.adapters.kubernetes.resources.shadows import KubernetesShadowRepository

    if page_size is not None:
        watching.LIST_PAGE_SIZE = page_size
    calls = kube_replay.ReplayedCalls()
    shadows = KubernetesShadowRepository(calls, NAMESPACE)  # type: ignore[arg-type]
    nodes = KubernetesNodeRepository(calls)  # type: ignore[arg-type]
    shadow_list = kube_replay.RecordedList(
        "List", (kube_replay.shadow_object(i, 1000 + i) for i in range(size)), 99999
    )
    node_list = kube_replay.RecordedList(
        "NodeList", (kube_replay.node_object(i, 1000 + i) for i in range(size)), 99999
    )
    calls.lists[kube_replay.SHADOWS_PATH] = shadow_list
    calls.lists[kube_replay.NODES_PATH] = node_list
    events = kube_replay.watch_body(_changed_shadow(i) for i in range(size))
    fleet = FleetMirror(shadows, nodes, RolloutRules(ConcurrencyLimit(10)))
    gc.collect()
    before_kib, _ = own_rss_kib()
    Path(f"/proc/{os.getpid()}/clear_refs").write_text("5")  # peak RSS counts from here
    first_list = _cpu_ms(fleet.shadow_informer.relist)  # includes one-time set-up costs

    def list_again() -> None:  # a full list into the filled mirror, as a resync did before
        listing = shadows.list()
        fleet.shadows.reconcile(listing.items, listing.resource_version)

    list_shadows = _cpu_ms(list_again)
    list_nodes = _cpu_ms(fleet.node_informer.relist)
    pages = calls.pages
    # The mirror is filled: by versions. Several times each, since a full collection the
    # lists above left due falls on one of them.
    resync_shadows = [_cpu_ms(fleet.shadow_informer.relist) for _ in range(RESYNCS)]
    resync_nodes = [_cpu_ms(fleet.node_informer.relist) for _ in range(RESYNCS)]
    resync_pages = (calls.pages - pages) // RESYNCS
    calls.watch_bodies["watch shadows"] = events
    applied = [0]

    def follow() -> None:
        for event in fleet.shadow_informer.watch(fleet.shadow_informer.version, 3600):
            applied[0] += fleet.shadow_informer.apply(event)
            if applied[0] == size:
                return

    watch = _cpu_ms(follow)
    gc.collect()
    after_kib, peak_kib = own_rss_kib()
    return {
        "objects": size,
        "shadow_list_mib": round(shadow_list.size / 2**20, 1),
        "node_list_mib": round(node_list.size / 2**20, 1),
        "shadow_metadata_list_mib": round(shadow_list.metadata_size / 2**20, 1),
        "node_metadata_list_mib": round(node_list.metadata_size / 2**20, 1),
        "list_page_size": watching.LIST_PAGE_SIZE,
        "list_requests": pages,
        "first_list_shadows_into_mirror_cpu_ms": round(first_list, 1),
        "list_shadows_into_mirror_cpu_ms": round(list_shadows, 1),
        "list_nodes_into_mirror_cpu_ms": round(list_nodes, 1),
        "resync_shadows_by_versions_cpu_ms": round(statistics.median(resync_shadows), 1),
        "resync_nodes_by_versions_cpu_ms": round(statistics.median(resync_nodes), 1),
        "resync_shadows_by_versions_cpu_ms_samples": [round(ms, 1) for ms in resync_shadows],
        "resync_nodes_by_versions_cpu_ms_samples": [round(ms, 1) for ms in resync_nodes],
        "resync_list_requests": resync_pages,
        "watch_events_applied": applied[0],
        "watch_event_cpu_us": round(1000 * watch / max(applied[0], 1), 1),
        "rss_mib_before_lists": mib(before_kib),
        "rss_mib_after_lists_and_events": mib(after_kib),
        "peak_rss_mib_over_before_lists": mib(peak_kib - before_kib),
        "mirror_rss_mib": mib(after_kib - before_kib),
    }


def _changed_shadow(index: int) -> dict[str, Any]:
    """The shadow after its agent saw a new version offered: a MODIFIED event of the watch."""
    import kube_replay

    shadow = kube_replay.shadow_object(index, 100000 + index)
    shadow["status"]["target_version"] = "1.21.0"
    return shadow


def run_child(size: int, phase: str, args: argparse.Namespace, *extra: str) -> dict[str, Any]:
    command = [
        sys.executable, str(HERE), "--child", str(size), phase,
        "--limit", str(args.limit), "--passes", str(args.passes), "--log", args.log, *extra,
    ]  # fmt: skip
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(output)
    return result


def run_case(size: int, phase: str, args: argparse.Namespace) -> dict[str, Any]:
    """The case in `--repeats` fresh processes: the median process by its unchanged-pass
    figure, and every process's medians (the spread shows how much other work on the machine
    moved the figures)."""
    runs = sorted(
        (run_child(size, phase, args) for _ in range(args.repeats)),
        key=lambda run: float(run["unchanged_pass_cpu_ms"]["median"]),
    )
    middle = dict(runs[len(runs) // 2])
    figures = (
        "unchanged_pass_cpu_ms",
        "one_changed_pass_cpu_ms",
        "full_resync_cpu_ms",
        "full_recompute_cpu_ms",
    )
    for figure in ("decide_only_held_cpu_ms", "decide_only_fresh_layout_cpu_ms"):
        middle[f"{figure}_by_process"] = [r[figure] for r in runs]
    for figure in figures:
        if figure in middle:
            middle[f"{figure}_median_by_process"] = [r[figure]["median"] for r in runs]
            middle[f"{figure}_min_by_process"] = [r[figure]["min"] for r in runs]
    middle["first_pass_cpu_ms_by_process"] = [r["first_pass_cpu_ms"] for r in runs]
    return middle


def per_shadow_growth(rows: list[dict[str, Any]], phase: str) -> dict[str, Any]:
    """Per-shadow cost of the passes that touch every shadow (first pass, full resync) at each
    size, in microseconds, and the ratio of the largest size to the smallest."""
    chosen = sorted((r for r in rows if r["phase"] == phase), key=lambda r: r["shadows"])
    result: dict[str, Any] = {}
    for figure, pick in (
        ("first_pass", lambda r: r["first_pass_cpu_ms"]),
        ("full_resync", lambda r: r["full_resync_cpu_ms"]["median"]),
        ("full_recompute", lambda r: r["full_recompute_cpu_ms"]["median"]),
        ("decide_only_held", lambda r: statistics.median(r["decide_only_held_cpu_ms_by_process"])),
        (
            "decide_only_fresh_layout",
            lambda r: statistics.median(r["decide_only_fresh_layout_cpu_ms_by_process"]),
        ),
    ):
        per = {str(r["shadows"]): round(1000 * pick(r) / r["shadows"], 3) for r in chosen}
        result[figure] = {"us_per_shadow": per, "largest_over_smallest": _ratio(per, chosen)}
    for figure in ("full_resync", "full_recompute"):  # the least of every process's samples
        key = f"{figure}_cpu_ms_min_by_process"
        per = {str(r["shadows"]): round(1000 * min(r[key]) / r["shadows"], 3) for r in chosen}
        result[figure]["us_per_shadow_min"] = per
        result[figure]["largest_over_smallest_min"] = _ratio(per, chosen)
    return result


def _ratio(per: dict[str, float], chosen: list[dict[str, Any]]) -> float | None:
    if len(chosen) < 2:
        return None
    return round(per[str(chosen[-1]["shadows"])] / per[str(chosen[0]["shadows"])], 2)


def goals(rows: list[dict[str, Any]], growth: dict[str, Any]) -> dict[str, Any]:
    """Each goal at 10,000 shadows, the worst phase's figure, and whether it is met."""
    at_10k = [r for r in rows if r["shadows"] == 10000]
    result: dict[str, Any] = {}
    for figure, goal in GOALS_AT_10000.items():
        measured = [r[figure]["median"] for r in at_10k if figure in r]
        if measured:
            worst = max(measured)
            result[figure] = {"goal": goal, "measured": worst, "met": worst <= goal}
    ratios = [
        g[f]["largest_over_smallest"]
        for g in growth.values()
        for f in ("full_resync", "full_recompute")
        if g[f]["largest_over_smallest"] is not None
    ]
    if ratios:
        worst_ratio = max(ratios)
        result["per_shadow_growth"] = {
            "goal": GOAL_PER_SHADOW_GROWTH,
            "measured": worst_ratio,
            "met": worst_ratio <= GOAL_PER_SHADOW_GROWTH,
        }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--sizes", default="1000,5000,10000", help='shadows per case ("": kube-replay only)'
    )
    parser.add_argument("--phases", default="idle,mid-rollout")
    parser.add_argument(
        "--limit",
        type=int,
        default=10,
        help="MAX_CONCURRENT_UPDATE, nodes mid-update in mid-rollout (default 10)",
    )
    parser.add_argument("--passes", type=int, default=15, help="measured passes per process")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per case")
    parser.add_argument("--replay", type=int, default=10000, help="objects in kube-replay (0: no)")
    parser.add_argument(
        "--list-page", type=int, default=None, help="kube-replay: objects per list request"
    )
    parser.add_argument("--log", default="/dev/null", help="the controller's log lines")
    parser.add_argument("--child", nargs=2, metavar=("SIZE", "PHASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        size, phase = int(args.child[0]), args.child[1]
        if phase == "kube-replay":
            print(json.dumps(replay(size, args.list_page)))
        else:
            print(json.dumps(one(size, phase, args.limit, args.passes, Path(args.log))))
        return 0
    facts = machine()
    rows = []
    phases = args.phases.split(",")
    for size in (int(text) for text in args.sizes.split(",") if text):  # "": the replay only
        for phase in phases:
            progress(f"{size} shadows, {phase}")
            rows.append(run_case(size, phase, args))
            progress(f"  {rows[-1]['unchanged_pass_cpu_ms']['median']} ms CPU per unchanged pass")
    replayed = None
    if args.replay:
        progress(f"kube-replay, {args.replay} objects")
        replayed = {
            "paged": run_child(args.replay, "kube-replay", args),
            "one_request_per_list": run_child(args.replay, "kube-replay", args, "--list-page", "0"),
        }
    growth = {phase: per_shadow_growth(rows, phase) for phase in phases}
    emit(
        {
            "benchmark": "controller_scale",
            "machine": facts,
            "settings": {"limit": args.limit, "passes": args.passes, "repeats": args.repeats},
            "cases": rows,
            "kube_replay": replayed,
            "per_shadow_growth": growth,
            "goals": goals(rows, growth),
            "load_average_1min_at_end": round(os.getloadavg()[0], 2),
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

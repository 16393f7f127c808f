"""Single changes one at a time, and the rollout: what each costs the controller's leader."""

from __future__ import annotations

import time
from typing import Any

from real_cluster import figures
from real_cluster.counters import snapshot, window
from real_cluster.fleet import NAMESPACE
from real_cluster.session import Session
from real_cluster.shadow_watch import ShadowWatch

TICK_SECONDS = 2.0  # the controller's default CONTROLLER_TICK_SECONDS


def one_changes(session: Session, samples: int, quiet: dict[str, Any]) -> dict[str, Any]:
    """CPU ms per single change, `samples` of each kind one every two ticks: a shadow changed
    in nothing the controller decides on (an annotation), and an agent's report of an update
    (the controller starts that node: its spec write and, cheapest-first, a pod census)."""
    if samples <= 0:
        return {}
    from kubernetes.client import CustomObjectsApi

    from brupop.adapters.kubernetes.resources.shadow_objects import GROUP, PLURAL, VERSION
    from brupop.domain.shadow import shadow_name

    api = CustomObjectsApi(session.access.admin)
    status = {"current_version": "1.0.0", "target_version": "1.1.0", "current_state": "Idle",
              "crash_count": 0}  # fmt: skip
    names = [shadow_name(node.name) for node in session.nodes[-samples:]]

    def touch(name: str) -> None:
        api.patch_namespaced_custom_object(
            GROUP, VERSION, NAMESPACE, PLURAL, name,
            {"metadata": {"annotations": {"bench.brupop/touched": str(time.time())}}},
        )  # fmt: skip

    def offer(name: str) -> None:
        api.patch_namespaced_custom_object_status(
            GROUP, VERSION, NAMESPACE, PLURAL, name, {"status": status}
        )

    return {
        "shadow_touched": _per_change(session, names, touch, quiet),
        "update_offered_node_started": _per_change(session, names, offer, quiet),
    }


def _per_change(session: Session, names: list[str], change: Any, quiet: dict[str, Any]) -> Any:
    """Pass CPU (the ticks' CPU less as many quiet ticks) and process CPU (less the quiet
    process CPU of the same time) per change, in ms."""
    before = snapshot(session)
    for name in names:
        change(name)
        time.sleep(2 * TICK_SECONDS)
    spent = window(before, snapshot(session))
    quiet_rate = quiet["leader_cpu_seconds"] / quiet["seconds"]
    extra = spent["leader_cpu_seconds"] - quiet_rate * spent["seconds"]
    quiet_tick = figures.pass_cpu_ms(quiet["ticks"], quiet["ticks_cpu_seconds"])
    return {
        "pass_cpu_ms": figures.change_cpu_ms(
            spent["ticks"], spent["ticks_cpu_seconds"], quiet_tick, len(names)
        ),
        "process_cpu_ms": round(max(0.0, extra) * 1000 / len(names), 3),
        "ticks": spent["ticks"],
        "tick_mean_ms": figures.pass_cpu_ms(spent["ticks"], spent["ticks_cpu_seconds"]),
        "quiet_tick_mean_ms": quiet_tick,
    }


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
        "mid_rollout_pass_cpu_ms": figures.pass_cpu_ms(spent["ticks"], spent["ticks_cpu_seconds"]),
        "mid_rollout_process_cpu_ms_per_2s": round(spent["leader_cpu_seconds"] * 1000 / passes, 3),
        "watch_events_per_second": spent["watch_events_per_second"],
        "all_clients_requests_per_second": spent["all_clients_requests_per_second"],
    }  # fmt: skip
    if not completed:
        left = sum(1 for n in names if watch.states.get(n, ("",))[0:1] != ("Idle",))
        result["cause"] = f"{left} nodes not back to Idle on 1.1.0 after {timeout:g} s"
    return result

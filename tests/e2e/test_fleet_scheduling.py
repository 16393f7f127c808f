"""Fleet-aware scheduling through `brupop simulate`: a zone budget holds at every observed
moment, a version pin keeps every node waiting and says so, a node running a do-not-disrupt pod
is never started and its REASON names the pod, and cheapest-first starts the empty nodes first.

Nothing here depends on how fast this machine is: overlaps are judged on the spans outside
Idle the observer recorded (one clock, every intermediate state), and order on the moments each
node first left Idle."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Any

import pytest

from tests.e2e.simulate_run import Simulate, SimulateRun, explain

ZONE_LABEL = "topology.kubernetes.io/zone"
PIN = "1.19.5"  # between --from-version 1.19.0 and the offered 1.20.0


def _spans(node: dict[str, Any]) -> list[tuple[float, float]]:
    """The node's spans outside Idle; one still open at the end runs to infinity."""
    return [(start, math.inf if end is None else end) for start, end in node["active_intervals"]]


def _same_zone_overlaps(run: SimulateRun) -> list[str]:
    """Every pair of nodes of one zone that were outside Idle at the same moment."""
    zones: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for node in run.report["nodes"]:
        zones[node["labels"][ZONE_LABEL]].append(node)
    overlaps = []
    for zone, nodes in zones.items():
        for a, b in itertools.combinations(nodes, 2):
            for (a0, a1), (b0, b1) in itertools.product(_spans(a), _spans(b)):
                if a0 < b1 and b0 < a1:
                    overlaps.append(f"{zone}: {a['name']} {a0}..{a1} and {b['name']} {b0}..{b1}")
    return overlaps


def _details(node: dict[str, Any]) -> list[str]:
    return [reason["detail"] for reason in node["wait_reasons"]]


@pytest.mark.e2e
def test_a_zone_budget_of_one_keeps_one_node_per_zone_outside_idle_and_all_finish(
    simulate: Simulate,
) -> None:
    spec = "  budgets:\n  - groupBy: topology.kubernetes.io/zone\n    maxConcurrent: 1\n"
    run = simulate(
        "--nodes", "9", "--zones", "3", "--max-concurrent", "3", "--timeout", "100", policy=spec,
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    nodes = run.report["nodes"]
    zones = sorted(node["labels"][ZONE_LABEL] for node in nodes)
    assert zones == ["zone-a"] * 3 + ["zone-b"] * 3 + ["zone-c"] * 3
    assert all(node["final_version"] == "1.20.0" and node["finished_at"] for node in nodes)
    assert all(len(node["active_intervals"]) >= 1 for node in nodes), nodes
    assert _same_zone_overlaps(run) == []
    for node in nodes:  # a node the budget held (which ones depends on timing) names its zone
        held = [r["detail"] for r in node["wait_reasons"] if r["reason"] == "budget_full"]
        zone = node["labels"][ZONE_LABEL]
        assert all(f"zone {zone} at 1/1" in detail for detail in held), node
    assert run.report["max_concurrent_observed"] <= 3
    assert run.last_line.startswith("OK: 9/9 nodes updated"), explain(run)


@pytest.mark.e2e
def test_a_pin_below_the_offered_version_leaves_every_node_waiting_on_the_pin(
    simulate: Simulate,
) -> None:
    spec = f"  version:\n    pin: {PIN}\n"
    run = simulate("--nodes", "3", "--timeout", "60", policy=spec)

    assert run.returncode == 1, explain(run)
    assert run.report["timed_out"] is False, "the run ends once the waiting fleet is quiet"
    for node in run.report["nodes"]:
        assert node["started_at"] is None and node["active_intervals"] == [], node
        assert node["final_version"] == "1.19.0", node
        pinned = [r for r in node["wait_reasons"] if r["reason"] == "pinned"]
        assert pinned, node
        assert all(r["detail"].startswith(f"pinned to {PIN}") for r in pinned), node
    assert run.report["max_concurrent_observed"] == 0


@pytest.mark.e2e
def test_a_node_running_a_do_not_disrupt_pod_is_not_started_and_its_reason_names_the_pod(
    simulate: Simulate,
) -> None:
    run = simulate(
        "--nodes", "3", "--max-concurrent", "2", "--pods-per-node", "default=1",
        "--do-not-disrupt-pod", "node-02", "--timeout", "60",
    )  # fmt: skip

    assert run.returncode == 1, explain(run)
    kept = run.node("node-02")
    assert kept["started_at"] is None and kept["active_intervals"] == [], kept
    assert kept["final_version"] == "1.19.0", kept
    assert any("keep-node-02-0" in detail for detail in _details(kept)), kept
    for name in ("node-01", "node-03"):
        assert run.node(name)["final_version"] == "1.20.0", run.node(name)
    assert "node-02" in run.last_line, run.last_line


@pytest.mark.e2e
def test_cheapest_first_starts_the_empty_nodes_before_the_loaded_ones(simulate: Simulate) -> None:
    # Paused until 4 s after every agent has reported (time for its first update check), so
    # all four are candidates of the same pass: otherwise the first to report would start
    # first, whatever the order.
    spec = "  paused: true\n"
    run = simulate(
        "--nodes", "4", "--max-concurrent", "1", "--pods-per-node", "node-01=4,node-02=4,default=0",
        "--resume-at", "4", "--timeout", "100", policy=spec,
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    nodes = run.report["nodes"]
    assert all(node["started_at"] is not None for node in nodes), nodes
    order = [node["name"] for node in sorted(nodes, key=lambda n: n["started_at"])]
    assert sorted(order[:2]) == ["node-03", "node-04"], order
    resumed = run.report["pauses"][0]["requested_at"]
    assert all(node["started_at"] > resumed for node in nodes), (resumed, nodes)
    assert run.last_line.startswith("OK: 4/4 nodes updated"), explain(run)

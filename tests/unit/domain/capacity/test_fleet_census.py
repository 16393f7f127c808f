"""A fleet census groups pods by node and answers cost and room questions from one moment."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.domain.capacity.fleet_census import FleetCensus
from brupop.domain.capacity.room import check_room_in
from brupop.domain.cluster.objects import Node, Pod, PodDisruptionBudget, PodPhase, Resources

MOMENT = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
GI = 1024**3


def _pod(name: str, node: str | None, **extra: object) -> Pod:
    return Pod(name=name, namespace="shop", uid=name, node_name=node, **extra)  # type: ignore[arg-type]


def test_pods_not_yet_on_a_node_are_left_out_and_unknown_nodes_are_empty() -> None:
    census = FleetCensus.of(
        MOMENT, [Node("n2", "u2"), Node("n1", "u1")], [_pod("a", "n1"), _pod("pending", None)], []
    )

    assert [node.name for node in census.nodes] == ["n1", "n2"]
    assert census.pods_by_node == {"n1": (_pod("a", "n1"),)}
    assert census.cost("n1") == 1
    assert (census.cost("ghost"), census.evicted("ghost"), census.pods_on("ghost")) == (0, (), ())


def test_finished_pods_are_not_kept_in_the_census() -> None:
    done = [
        _pod("job-1", "n1", phase=PodPhase.SUCCEEDED),
        _pod("job-2", "n1", phase=PodPhase.FAILED),
    ]

    census = FleetCensus.of(MOMENT, [Node("n1", "u1")], [_pod("web", "n1"), *done], [])

    assert census.pods_on("n1") == (_pod("web", "n1"),)


def test_costs_weigh_budgeted_pods_double_and_room_uses_the_census_moment() -> None:
    budget = PodDisruptionBudget("db", "shop", selector={"app": "db"}, min_available=1)
    nodes = [Node("n1", "u1", allocatable=Resources(1000, GI)), Node("n2", "u2")]
    pods = [_pod("db-0", "n1", labels={"app": "db"}, requests=Resources(500, GI // 2))]

    census = FleetCensus.of(MOMENT, nodes, pods, [budget])

    assert census.costs == {"n1": 2}
    assert census.room == {"n1": Resources(500, GI // 2), "n2": None}
    assert check_room_in(census.evicted("n1"), census.nodes, census.room, "n1").reason == (
        "no room for 1 pod (no other node with known allocatable CPU and memory)"
    )
    assert check_room_in(census.evicted("n2"), census.nodes, census.room, "n2").fits

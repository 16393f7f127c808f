"""The capacity check's start rule over one census: nodes leaving offer no room and their pods
need some, verdicts are kept while the census and the leaving nodes stay the same, and a pass
makes a bounded number of new checks."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.domain.capacity.capacity_rule import CapacityRule, CensusMissing, RoomVerdicts
from brupop.domain.capacity.fleet_census import FleetCensus
from brupop.domain.cluster.objects import Node, Pod
from brupop.domain.cluster.resources import Resources
from brupop.domain.reason import Reason
from brupop.domain.starting.start_holds import StartCandidate, StartHold

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
GI = 1 << 30


def _census(free_spare: int, pods: dict[str, int]) -> FleetCensus:
    """Full nodes (each running one pod of the given CPU millis) and a node `spare` with
    `free_spare` millis of CPU."""
    nodes = [
        Node(name, f"uid-{name}", allocatable=Resources(m, 8 * GI)) for name, m in pods.items()
    ]
    nodes.append(Node("spare", "uid-spare", allocatable=Resources(free_spare, 8 * GI)))
    running = [
        Pod(f"app-{name}", "default", f"pod-{name}", name, requests=Resources(m, GI))
        for name, m in pods.items()
        if m
    ]
    return FleetCensus.of(NOW, nodes, running, [])


def _candidate(node: str) -> StartCandidate:
    return StartCandidate(f"brs-{node}", node, "1.20.0", None)


def _hold(rule: CapacityRule | CensusMissing, node: str) -> StartHold | None:
    return rule.hold(_candidate(node), NOW)


def test_pods_that_fit_on_another_node_pass() -> None:
    rule = CapacityRule(_census(2000, {"a": 1000}), (), RoomVerdicts())
    assert _hold(rule, "a") is None


def test_pods_that_fit_nowhere_hold_the_node_with_the_verdicts_sentence() -> None:
    rule = CapacityRule(_census(2000, {"a": 3000}), (), RoomVerdicts())
    assert _hold(rule, "a") == StartHold(Reason.NO_ROOM, "no room for 1 pod (needs 3 CPU)")


def test_a_node_with_nothing_to_evict_passes_even_with_no_room_anywhere() -> None:
    rule = CapacityRule(_census(0, {"a": 3000, "empty": 0}), (), RoomVerdicts(), misses=0)
    assert _hold(rule, "empty") is None


def test_a_node_started_in_the_pass_needs_room_for_its_pods_and_offers_none() -> None:
    rule = CapacityRule(_census(2000, {"a": 1500, "b": 1500}), (), RoomVerdicts())
    assert _hold(rule, "a") is None
    rule.started(_candidate("a"))
    assert _hold(rule, "b") == StartHold(
        Reason.NO_ROOM, "no room for 1 pod (needs 1.5 CPU) with 1 other node updating"
    )


def test_a_node_leaving_when_the_pass_began_counts_like_one_started_in_it() -> None:
    rule = CapacityRule(_census(2000, {"a": 1500, "b": 1500}), ("a",), RoomVerdicts())
    hold = _hold(rule, "b")
    assert hold is not None and hold.reason is Reason.NO_ROOM


def test_a_verdict_is_reused_while_the_census_and_the_leaving_nodes_stay_the_same() -> None:
    census, verdicts = _census(2000, {"a": 3000, "b": 1000}), RoomVerdicts()
    first = CapacityRule(census, (), verdicts)
    assert _hold(first, "a") is not None and _hold(first, "b") is None
    later = CapacityRule(census, (), verdicts, misses=0)  # a later pass with no checks left
    assert _hold(later, "a") == StartHold(Reason.NO_ROOM, "no room for 1 pod (needs 3 CPU)")
    assert _hold(later, "b") is None


def test_a_new_census_or_other_leaving_nodes_check_again() -> None:
    census, verdicts = _census(2000, {"a": 1000, "b": 1000}), RoomVerdicts()
    assert _hold(CapacityRule(census, (), verdicts), "a") is None
    for rule in (
        CapacityRule(_census(2000, {"a": 1000, "b": 1000}), (), verdicts, misses=0),
        CapacityRule(census, ("b",), verdicts, misses=0),
    ):
        hold = _hold(rule, "a")
        assert hold is not None and hold.detail.startswith("room not checked yet")


def test_a_pass_stops_checking_after_its_number_of_checks_that_found_no_room() -> None:
    census = _census(0, {"a": 1000, "b": 1000, "c": 1000})
    rule = CapacityRule(census, (), RoomVerdicts(), misses=2)
    assert [h.detail if (h := _hold(rule, n)) else None for n in ("a", "b", "c")] == [
        "no room for 1 pod (needs 1 CPU)",
        "no room for 1 pod (needs 1 CPU)",
        "room not checked yet: 2 nodes before it found none in this pass",
    ]


def test_checks_that_found_room_do_not_count_against_the_pass() -> None:
    census = _census(4000, {"a": 1000, "b": 1000, "c": 5000})
    rule = CapacityRule(census, (), RoomVerdicts(), misses=1)
    assert [h.detail if (h := _hold(rule, n)) else None for n in ("a", "b", "c")] == [
        None,
        None,
        "no room for 1 pod (needs 5 CPU)",
    ]


def test_a_missing_census_holds_every_node_naming_the_listing_error() -> None:
    assert _hold(CensusMissing("timed out"), "a") == StartHold(
        Reason.NO_ROOM, "room unknown: the cluster's pods could not be listed (timed out)"
    )

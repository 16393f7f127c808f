"""The capacity check: do a drain's evicted pods fit on the other schedulable nodes?"""

from __future__ import annotations

from collections.abc import Sequence

from brupop.domain.capacity.room import check_room, check_room_in, free_room
from brupop.domain.cluster.objects import Node, Pod, PodPhase, Resources, Taint, Toleration

GI = 1024**3
MI = 1024**2
ROOMY = Resources(cpu_millis=4000, memory_bytes=16 * GI)


def _node(name: str, allocatable: Resources | None = ROOMY, **extra: object) -> Node:
    return Node(name=name, uid=name, allocatable=allocatable, **extra)  # type: ignore[arg-type]


def _pod(name: str, cpu: int = 0, memory: int = 0, node: str = "leaving", **extra: object) -> Pod:
    requests = Resources(cpu_millis=cpu, memory_bytes=memory)
    return Pod(name=name, namespace="shop", uid=name, node_name=node, requests=requests, **extra)  # type: ignore[arg-type]


def _check(evicted: Sequence[Pod], nodes: Sequence[Node], *running: Pod) -> tuple[bool, str]:
    pods_by_node: dict[str, list[Pod]] = {}
    for pod in running:
        pods_by_node.setdefault(pod.node_name or "", []).append(pod)
    verdict = check_room(evicted, [_node("leaving"), *nodes], pods_by_node, "leaving")
    return verdict.fits, verdict.reason


def test_nothing_to_evict_always_fits() -> None:
    assert _check([], []) == (True, "no pods to move")


def test_pods_that_fit_on_another_node_fit() -> None:
    assert _check([_pod("web", 1000, GI), _pod("db", 2000, GI)], [_node("n2")])[0]


def test_pods_spread_over_several_nodes_when_none_takes_them_all() -> None:
    nodes = [_node("n2", Resources(2000, 4 * GI)), _node("n3", Resources(2000, 4 * GI))]

    assert _check([_pod("a", 1500), _pod("b", 1500)], nodes)[0]


def test_too_much_cpu_names_how_many_pods_and_how_much_cpu() -> None:
    nodes = [_node("n2", Resources(1000, 16 * GI))]
    evicted = [_pod("a", 1500), _pod("b", 500), _pod("c", 1000)]

    # largest first: a (1.5) does not fit; c (1) fits; b (0.5) no longer does
    assert _check(evicted, nodes) == (False, "no room for 2 pods (needs 2 CPU)")


def test_memory_is_said_in_gi_or_mi() -> None:
    nodes = [_node("n2", Resources(150, GI))]

    assert _check([_pod("big", 0, 3 * GI // 2)], nodes) == (
        False,
        "no room for 1 pod (needs 1.5 Gi memory)",
    )
    # a takes the node; b then lacks both CPU and memory
    assert _check([_pod("a", 100, GI), _pod("b", 100, 512 * MI)], nodes) == (
        False,
        "no room for 1 pod (needs 0.1 CPU, 512 Mi memory)",
    )


def test_a_node_already_full_has_no_room() -> None:
    nodes = [_node("n2", Resources(2000, 4 * GI))]
    running = _pod("resident", 1800, GI, node="n2")

    assert _check([_pod("web", 500)], nodes, running) == (
        False,
        "no room for 1 pod (needs 0.5 CPU)",
    )


def test_finished_pods_leave_their_room_free() -> None:
    nodes = [_node("n2", Resources(2000, 4 * GI))]
    done = _pod("report", 1800, GI, node="n2", phase=PodPhase.SUCCEEDED)

    assert _check([_pod("web", 500)], nodes, done)[0]


def test_the_leaving_node_cordoned_and_deleting_nodes_are_no_room() -> None:
    nodes = [_node("cordoned", unschedulable=True), _node("going", deleting=True)]

    assert _check([_pod("web", 100)], nodes) == (
        False,
        "no room for 1 pod (no other schedulable node)",
    )


def test_nodes_starting_in_the_same_pass_are_no_room() -> None:
    nodes = [_node("leaving"), _node("n2")]
    verdict = check_room([_pod("web", 100)], nodes, {}, "leaving", also_leaving={"n2"})

    assert (verdict.fits, verdict.reason) == (
        False,
        "no room for 1 pod (no other schedulable node)",
    )


def test_a_node_with_unknown_allocatable_has_no_room() -> None:
    assert _check([_pod("web")], [_node("n2", allocatable=None)]) == (
        False,
        "no room for 1 pod (no other node with known allocatable CPU and memory)",
    )


def test_a_pod_with_an_unreadable_request_fits_nowhere() -> None:
    assert _check([_pod("odd", requests_known=False)], [_node("n2")]) == (
        False,
        "no room for 1 pod (pod shop/odd has an unreadable request)",
    )


def test_a_node_running_a_pod_of_unknown_request_has_no_room() -> None:
    odd = _pod("odd", node="n2", requests_known=False)

    assert not _check([_pod("web", 100)], [_node("n2")], odd)[0]


def test_a_node_selector_keeps_a_pod_to_matching_nodes() -> None:
    ssd = _node("ssd", labels={"disk": "ssd"})
    pod = _pod("db", 100, node_selector={"disk": "ssd"})

    assert _check([pod], [ssd])[0]
    assert _check([pod], [_node("hdd", labels={"disk": "hdd"}), _node("plain")]) == (
        False,
        "no room for 1 pod (no other node accepts them: nodeSelector or taints)",
    )


def test_the_reason_names_only_the_resources_the_pods_lacked() -> None:
    nodes = [_node("n2", Resources(1000, 16 * GI))]
    kept_off = _pod("db", 500, GI, node_selector={"disk": "ssd"})

    assert _check([_pod("web", 1500, GI), kept_off], nodes) == (
        False,
        "no room for 2 pods (needs 1.5 CPU)",
    )


def test_no_schedule_and_no_execute_taints_need_a_toleration() -> None:
    for effect in ("NoSchedule", "NoExecute"):
        tainted = _node("gpu", taints=(Taint("nvidia.com/gpu", "true", effect),))

        assert not _check([_pod("web", 100)], [tainted])[0]
        tolerant = _pod("ml", 100, tolerations=(Toleration("nvidia.com/gpu", "Equal", "true"),))
        assert _check([tolerant], [tainted])[0]


def test_prefer_no_schedule_taints_never_keep_a_pod_off() -> None:
    spot = _node("spot", taints=(Taint("spot", "", "PreferNoSchedule"),))

    assert _check([_pod("web", 100)], [spot])[0]


def test_equal_needs_the_taints_value_and_exists_takes_any_value() -> None:
    tainted = _node("db-node", taints=(Taint("dedicated", "db", "NoSchedule"),))
    wrong = _pod("a", 100, tolerations=(Toleration("dedicated", "Equal", "web"),))
    exists = _pod("b", 100, tolerations=(Toleration("dedicated", "Exists"),))

    assert not _check([wrong], [tainted])[0]
    assert _check([exists], [tainted])[0]


def test_an_empty_key_with_exists_tolerates_every_taint() -> None:
    tainted = _node(
        "special",
        taints=(Taint("dedicated", "db", "NoSchedule"), Taint("gpu", "", "NoExecute")),
    )
    everything = _pod("agent-like", 100, tolerations=(Toleration("", "Exists"),))

    assert _check([everything], [tainted])[0]


def test_largest_pods_are_placed_first_so_small_ones_fill_the_gaps() -> None:
    nodes = [_node("n2", Resources(2000, 16 * GI)), _node("n3", Resources(1000, 16 * GI))]
    # Placed in the given order, the small pod would take half of n2 and leave the large one
    # nowhere; largest first, the large pod takes n2 and the small one n3.
    evicted = [_pod("small", 1000), _pod("large", 2000)]

    assert _check(evicted, nodes)[0]


def test_room_computed_once_serves_every_candidate_unchanged() -> None:
    nodes = [_node(name, Resources(1000, GI)) for name in ("a", "b", "c")]
    pods_by_node = {
        "a": [_pod("on-a", 700, node="a")],
        "b": [_pod("on-b", 200, node="b")],
        "c": [_pod("on-c", 1000, node="c")],
    }
    room = free_room(nodes, pods_by_node)

    verdicts = {name: check_room_in(pods_by_node[name], nodes, room, name) for name in "abc"}

    assert room == {"a": Resources(300, GI), "b": Resources(800, GI), "c": Resources(0, GI)}
    assert verdicts["a"].fits and verdicts["b"].fits
    assert verdicts["c"].reason == "no room for 1 pod (needs 1 CPU)"
    assert verdicts["c"].unplaced == tuple(pods_by_node["c"])
    assert verdicts["c"].needs == Resources(1000, 0)

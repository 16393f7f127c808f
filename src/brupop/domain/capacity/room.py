"""Is there room elsewhere for the pods a node's drain would evict?

A first-fit check, largest pod first, of the evicted pods' CPU and memory requests against the
other schedulable nodes' allocatable minus the requests of what already runs there. A pod may
go only to a node whose labels match its nodeSelector and whose NoSchedule and NoExecute taints
it tolerates (PreferNoSchedule is ignored, as it only steers the scheduler).

What it ignores, so it can say yes where the scheduler would say no: node and pod affinity and
anti-affinity, topology spread constraints, pod overhead (RuntimeClass), extended resources
(GPUs, hugepages, ephemeral storage), the node's pod-count limit, host ports and volume limits,
and pods that are Pending elsewhere. What it is strict about: a node whose allocatable is
unknown has no room, a pod whose request could not be read fits nowhere, and a node running a
pod whose request could not be read has no room (its use is unknown).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from brupop.domain.cluster.objects import Node, Pod
from brupop.domain.cluster.resources import NO_RESOURCES, Resources
from brupop.domain.cluster.taints import blocking_taints

FreeRoom = Mapping[str, Resources | None]
"""Per node name: allocatable minus what its pods request; None when that is unknown."""


@dataclass(frozen=True)
class RoomVerdict:
    """Whether the evicted pods fit elsewhere; `reason` is the sentence a waiting node shows,
    e.g. `no room for 3 pods (needs 2.5 CPU)`."""

    fits: bool
    reason: str
    unplaced: tuple[Pod, ...] = ()
    needs: Resources = NO_RESOURCES  # what the unplaced pods request together
    # (the reason names only the resources they lacked: `needs 2.5 CPU` when memory was there)


def free_room(
    nodes: Sequence[Node], pods_by_node: Mapping[str, Sequence[Pod]]
) -> dict[str, Resources | None]:
    """Each node's allocatable minus the requests of its unfinished pods (None: unknown).
    Compute it once per fleet snapshot and pass it to `check_room_in` for every candidate."""
    room: dict[str, Resources | None] = {}
    for node in nodes:
        free = node.allocatable
        for pod in pods_by_node.get(node.name, ()):
            if free is None:
                break
            if pod.finished:
                continue
            free = free - pod.requests if pod.requests_known else None
        room[node.name] = free
    return room


def check_room(
    evicted: Sequence[Pod],
    nodes: Sequence[Node],
    pods_by_node: Mapping[str, Sequence[Pod]],
    leaving: str,
    *,
    also_leaving: Collection[str] = (),
) -> RoomVerdict:
    """Do `evicted` (the pods of node `leaving`) fit on the other schedulable nodes? Nodes in
    `also_leaving` (say, the ones starting in the same pass) are not counted as room either."""
    return check_room_in(
        evicted, nodes, free_room(nodes, pods_by_node), leaving, also_leaving=also_leaving
    )


def check_room_in(
    evicted: Sequence[Pod],
    nodes: Sequence[Node],
    room: FreeRoom,
    leaving: str,
    *,
    also_leaving: Collection[str] = (),
) -> RoomVerdict:
    """`check_room` over a `free_room` computed beforehand."""
    if not evicted:
        return RoomVerdict(fits=True, reason="no pods to move")
    gone = {leaving, *also_leaving}
    hosts = [
        node
        for node in sorted(nodes, key=lambda n: n.name)
        if not (node.unschedulable or node.deleting or node.name in gone)
    ]
    free = {node.name: room.get(node.name) for node in hosts}
    unplaced: list[tuple[Pod, _Shortage]] = []
    for pod in sorted(evicted, key=_largest_first):
        placed = (
            _first_fit(pod, hosts, free)
            if pod.requests_known
            else _Shortage(cpu=False, memory=False)
        )
        if isinstance(placed, _Shortage):
            unplaced.append((pod, placed))
        else:
            name, room_there = placed
            free[name] = room_there - pod.requests
    if not unplaced:
        return RoomVerdict(fits=True, reason=f"room for {_pods(len(evicted))} on other nodes")
    return _no_room(unplaced, hosts, free)


class _Shortage(NamedTuple):
    """Why a pod found no host: some host that would take it lacked CPU, or memory."""

    cpu: bool
    memory: bool


def _largest_first(pod: Pod) -> tuple[int, int, str, str]:
    return (-pod.requests.cpu_millis, -pod.requests.memory_bytes, pod.namespace, pod.name)


def _first_fit(
    pod: Pod, hosts: Sequence[Node], free: Mapping[str, Resources | None]
) -> tuple[str, Resources] | _Shortage:
    """The first host (by name) the pod may land on with room for it, and that host's free
    room; else which resources the hosts it may land on lacked."""
    cpu_short = memory_short = False
    for node in hosts:
        room = free[node.name]
        if room is None:
            continue
        if any(node.labels.get(key) != value for key, value in pod.node_selector.items()):
            continue
        if blocking_taints(node.taints, pod.tolerations):
            continue
        if room.covers(pod.requests):
            return node.name, room
        cpu_short |= room.cpu_millis < pod.requests.cpu_millis
        memory_short |= room.memory_bytes < pod.requests.memory_bytes
    return _Shortage(cpu=cpu_short, memory=memory_short)


def _no_room(
    unplaced: Sequence[tuple[Pod, _Shortage]],
    hosts: Sequence[Node],
    free: Mapping[str, Resources | None],
) -> RoomVerdict:
    pods = tuple(pod for pod, _ in unplaced)
    needs = NO_RESOURCES
    short = NO_RESOURCES  # the requests of the resources each pod lacked
    for pod, shortage in unplaced:
        needs = needs + pod.requests
        short = short + Resources(
            pod.requests.cpu_millis if shortage.cpu else 0,
            pod.requests.memory_bytes if shortage.memory else 0,
        )
    unreadable = [pod for pod in pods if not pod.requests_known]
    if unreadable:
        detail = f"pod {unreadable[0].namespace}/{unreadable[0].name} has an unreadable request"
    elif not hosts:
        detail = "no other schedulable node"
    elif all(free[node.name] is None for node in hosts):
        detail = "no other node with known allocatable CPU and memory"
    elif short.is_zero:
        detail = "no other node accepts them: nodeSelector or taints"
    else:
        detail = f"needs {short.describe()}"
    reason = f"no room for {_pods(len(pods))} ({detail})"
    return RoomVerdict(fits=False, reason=reason, unplaced=pods, needs=needs)


def _pods(count: int) -> str:
    return f"{count} pod" if count == 1 else f"{count} pods"

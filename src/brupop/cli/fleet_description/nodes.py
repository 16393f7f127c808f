"""The simulated fleet: opted-in Nodes, their agent pods and tokens, and workloads to drain.

Each node gets a DaemonSet-owned agent pod (what the apiserver's TokenReview check looks for)
and a projected token written where its agent reads it. Workload pods belong to a ReplicaSet
and a StatefulSet behind PodDisruptionBudgets, so every drain goes through the eviction rules;
`--pods-per-node` puts instead as many ReplicaSet pods on each node as it says. Every node has
the same allocatable and every workload pod the same requests, so the capacity check has
something to weigh; `--zones` adds the zone label.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from brupop.cli.fleet_description.fleet_shape import ZONE_LABEL, FleetShape, PodCounts
from brupop.cli.fleet_description.simulated_cluster import FleetCluster
from brupop.domain.cluster.objects import COMPONENT_LABEL, OwnerReference, Resources
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE

AGENT_DAEMONSET = "brupop-agent"
AGENT_SERVICE_ACCOUNT = "brupop-agent-service-account"
AGENT_COMPONENT = "agent"
WORKLOAD_NAMESPACE = "default"
TOKEN_TTL_SECONDS = 24 * 3600.0
_MI = 1024**2
NODE_ALLOCATABLE = Resources(cpu_millis=8000, memory_bytes=16 * 1024 * _MI)
POD_REQUESTS = Resources(cpu_millis=100, memory_bytes=128 * _MI)
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
_FIRST_ADDRESS = ipaddress.IPv4Address("10.0.0.11")  # node-01's


def node_address(index: int) -> str:
    """The InternalIP of the fleet's `index`-th node (from 0): node-01 has 10.0.0.11, node-02
    10.0.0.12, ...: a private network, which the default address allowance lets probes reach."""
    return str(_FIRST_ADDRESS + index)


@dataclass(frozen=True)
class SimulatedNode:
    """One node of the fleet and the files its agent and host emulator use."""

    name: str
    agent_pod: str
    token_path: Path
    host_dir: Path


def build_fleet(
    cluster: FleetCluster,
    names: list[str],
    work_dir: Path,
    *,
    blocked_drains: Iterable[str] = (),
    shape: FleetShape | None = None,
    token_ttl_seconds: float = TOKEN_TTL_SECONDS,
) -> list[SimulatedNode]:
    """Add the nodes, agent pods, tokens and workloads; return what each agent needs (tokens
    last `token_ttl_seconds` on the cluster's clock, which a fast clock may move far ahead)."""
    shape = shape or FleetShape()
    fleet = [
        _add_node(
            cluster,
            name,
            work_dir / "nodes" / name,
            address=node_address(index),
            zone=shape.zone_of(index),
            token_ttl_seconds=token_ttl_seconds,
        )
        for index, name in enumerate(names)
    ]
    if shape.pods is None:
        _add_web(cluster, names)
        _add_cache(cluster, names)
    else:
        _add_batch(cluster, names, shape.pods)
    for name in blocked_drains:
        _add_undisruptable_pod(cluster, name)
    for name in shape.do_not_disrupt:
        _add_do_not_disrupt_pod(cluster, name)
    return fleet


def do_not_disrupt_pod(node: str) -> str:
    """The name of the pod `--do-not-disrupt-pod NODE` runs there (namespace default)."""
    return f"keep-{node}-0"


def _add_node(
    cluster: FleetCluster,
    name: str,
    directory: Path,
    *,
    address: str,
    zone: str | None,
    token_ttl_seconds: float,
) -> SimulatedNode:
    labels = {OPT_IN_LABEL: OPT_IN_VALUE, "kubernetes.io/hostname": name}
    if zone is not None:
        labels[ZONE_LABEL] = zone
    cluster.add_node(name, labels=labels, allocatable=NODE_ALLOCATABLE, internal_ip=address)
    pod = f"{AGENT_DAEMONSET}-{name}"
    cluster.add_pod(
        cluster.namespace,
        pod,
        name,
        labels={COMPONENT_LABEL: AGENT_COMPONENT},
        owners=(OwnerReference(kind="DaemonSet", name=AGENT_DAEMONSET, controller=True),),
        service_account=AGENT_SERVICE_ACCOUNT,
    )
    directory.mkdir(parents=True, exist_ok=True)
    token_path = directory / "token"
    token_path.touch(mode=0o600)
    token_path.write_text(
        cluster.issue_token(cluster.namespace, pod, ttl_seconds=token_ttl_seconds)
    )
    host_dir = directory / "host"
    host_dir.mkdir(exist_ok=True)
    return SimulatedNode(name=name, agent_pod=pod, token_path=token_path, host_dir=host_dir)


def _add_web(cluster: FleetCluster, names: list[str]) -> None:
    """A Deployment's ReplicaSet with one pod per node; its budget lets one go at a time."""
    owner = OwnerReference(kind="ReplicaSet", name="web-5d8f7", controller=True)
    for index, node in enumerate(names):
        cluster.add_pod(
            WORKLOAD_NAMESPACE, f"web-5d8f7-{index:03d}", node, labels={"app": "web"},
            owners=(owner,), requests=POD_REQUESTS,
        )  # fmt: skip
    cluster.add_disruption_budget(WORKLOAD_NAMESPACE, "web", {"app": "web"}, max_unavailable=1)


def _add_cache(cluster: FleetCluster, names: list[str]) -> None:
    """A StatefulSet on every other node; its budget keeps all but one replica available."""
    owner = OwnerReference(kind="StatefulSet", name="cache", controller=True)
    hosts = names[::2]
    for index, node in enumerate(hosts):
        cluster.add_pod(
            WORKLOAD_NAMESPACE, f"cache-{index}", node, labels={"app": "cache"}, owners=(owner,),
            requests=POD_REQUESTS,
        )  # fmt: skip
    cluster.add_disruption_budget(
        WORKLOAD_NAMESPACE, "cache", {"app": "cache"}, min_available=max(0, len(hosts) - 1)
    )


def _add_batch(cluster: FleetCluster, names: list[str], counts: PodCounts) -> None:
    """`--pods-per-node`: a ReplicaSet's pods, as many on each node as asked, with no
    PodDisruptionBudget (their drain is never refused)."""
    owner = OwnerReference(kind="ReplicaSet", name="batch-7c4b9", controller=True)
    for node in names:
        for index in range(counts.on(node)):
            cluster.add_pod(
                WORKLOAD_NAMESPACE, f"batch-7c4b9-{node}-{index:02d}", node,
                labels={"app": "batch"}, owners=(owner,), requests=POD_REQUESTS,
            )  # fmt: skip


def _add_do_not_disrupt_pod(cluster: FleetCluster, node: str) -> None:
    """A pod Karpenter must not disrupt: a node running it should not be started."""
    app = f"keep-{node}"
    cluster.add_pod(
        WORKLOAD_NAMESPACE,
        do_not_disrupt_pod(node),
        node,
        labels={"app": app},
        owners=(OwnerReference(kind="ReplicaSet", name=app, controller=True),),
        annotations={DO_NOT_DISRUPT: "true"},
        requests=POD_REQUESTS,
    )


def _add_undisruptable_pod(cluster: FleetCluster, node: str) -> None:
    """A pod whose budget demands it stays up: evicting it is always refused."""
    app = f"pinned-{node}"
    cluster.add_pod(
        WORKLOAD_NAMESPACE,
        f"{app}-0",
        node,
        labels={"app": app},
        owners=(OwnerReference(kind="ReplicaSet", name=app, controller=True),),
        requests=POD_REQUESTS,
    )
    cluster.add_disruption_budget(WORKLOAD_NAMESPACE, app, {"app": app}, min_available=1)

"""The simulated fleet: opted-in Nodes, their agent pods and tokens, and workloads to drain.

Each node gets a DaemonSet-owned agent pod (what the apiserver's TokenReview check looks for)
and a projected token written where its agent reads it. Workload pods belong to a ReplicaSet
and a StatefulSet behind PodDisruptionBudgets, so every drain goes through the eviction rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster import COMPONENT_LABEL, OwnerReference, Resources
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE

AGENT_DAEMONSET = "brupop-agent"
AGENT_SERVICE_ACCOUNT = "brupop-agent-service-account"
AGENT_COMPONENT = "agent"
WORKLOAD_NAMESPACE = "default"
TOKEN_TTL_SECONDS = 24 * 3600.0
_MI = 1024**2
NODE_ALLOCATABLE = Resources(cpu_millis=8000, memory_bytes=16 * 1024 * _MI)


@dataclass(frozen=True)
class SimulatedNode:
    """One node of the fleet and the files its agent and host emulator use."""

    name: str
    agent_pod: str
    token_path: Path
    host_dir: Path


def build_fleet(
    cluster: InMemoryCluster,
    names: list[str],
    work_dir: Path,
    *,
    blocked_drains: Iterable[str] = (),
) -> list[SimulatedNode]:
    """Add the nodes, agent pods, tokens and workloads; return what each agent needs."""
    fleet = [_add_node(cluster, name, work_dir / "nodes" / name) for name in names]
    _add_web(cluster, names)
    _add_cache(cluster, names)
    for name in blocked_drains:
        _add_undisruptable_pod(cluster, name)
    return fleet


def _add_node(cluster: InMemoryCluster, name: str, directory: Path) -> SimulatedNode:
    labels = {OPT_IN_LABEL: OPT_IN_VALUE, "kubernetes.io/hostname": name}
    cluster.add_node(name, labels=labels, allocatable=NODE_ALLOCATABLE)  # the capacity check's
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
        cluster.issue_token(cluster.namespace, pod, ttl_seconds=TOKEN_TTL_SECONDS)
    )
    host_dir = directory / "host"
    host_dir.mkdir(exist_ok=True)
    return SimulatedNode(name=name, agent_pod=pod, token_path=token_path, host_dir=host_dir)


def _add_web(cluster: InMemoryCluster, names: list[str]) -> None:
    """A Deployment's ReplicaSet with one pod per node; its budget lets one go at a time."""
    owner = OwnerReference(kind="ReplicaSet", name="web-5d8f7", controller=True)
    for index, node in enumerate(names):
        cluster.add_pod(
            WORKLOAD_NAMESPACE, f"web-5d8f7-{index:03d}", node, labels={"app": "web"},
            owners=(owner,),
        )  # fmt: skip
    cluster.add_disruption_budget(WORKLOAD_NAMESPACE, "web", {"app": "web"}, max_unavailable=1)


def _add_cache(cluster: InMemoryCluster, names: list[str]) -> None:
    """A StatefulSet on every other node; its budget keeps all but one replica available."""
    owner = OwnerReference(kind="StatefulSet", name="cache", controller=True)
    hosts = names[::2]
    for index, node in enumerate(hosts):
        cluster.add_pod(
            WORKLOAD_NAMESPACE, f"cache-{index}", node, labels={"app": "cache"}, owners=(owner,)
        )
    cluster.add_disruption_budget(
        WORKLOAD_NAMESPACE, "cache", {"app": "cache"}, min_available=max(0, len(hosts) - 1)
    )


def _add_undisruptable_pod(cluster: InMemoryCluster, node: str) -> None:
    """A pod whose budget demands it stays up: evicting it is always refused."""
    app = f"pinned-{node}"
    cluster.add_pod(
        WORKLOAD_NAMESPACE,
        f"{app}-0",
        node,
        labels={"app": app},
        owners=(OwnerReference(kind="ReplicaSet", name=app, controller=True),),
    )
    cluster.add_disruption_budget(WORKLOAD_NAMESPACE, app, {"app": app}, min_available=1)

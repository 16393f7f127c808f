"""What a test puts in a cluster before brupop reads it, written once: a node's or a pod's
fields as a value (NodeSeed, PodSeed), which the in-memory cluster or the Kubernetes API
emulator takes in, so that every cluster a contract test runs against is seeded alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

from brupop.adapters.kubernetes.resources.nodes import node_from_object
from brupop.adapters.kubernetes.resources.pods import pod_from_object
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import (
    Node,
    OwnerReference,
    Pod,
    PodPhase,
    Resources,
    Taint,
    Toleration,
)
from brupop.domain.cluster.resources import NO_RESOURCES
from tests.support.kube_emulator import KubeEmulator


class ClusterSeeder(Protocol):
    """Puts nodes and pods in a cluster, with the fields of NodeSeed and PodSeed."""

    def add_node(self, name: str, **node: Any) -> Node: ...

    def add_pod(self, namespace: str, name: str, node_name: str, **pod: Any) -> Pod: ...


@dataclass(frozen=True)
class NodeSeed:
    """A Node's fields as a test sets them."""

    labels: Mapping[str, str] | None = None
    unschedulable: bool = False
    ready: bool = True
    internal_ip: str | None = None
    taints: Sequence[Taint] = ()
    allocatable: Resources | None = None
    deleting: bool = False


@dataclass(frozen=True)
class PodSeed:
    """A Pod's fields as a test sets them (a running, ready pod by default)."""

    labels: Mapping[str, str] | None = None
    owners: Sequence[OwnerReference] = ()
    phase: PodPhase = PodPhase.RUNNING
    annotations: Mapping[str, str] | None = None
    service_account: str | None = None
    ready: bool = True
    requests: Resources = NO_RESOURCES
    node_selector: Mapping[str, str] | None = None
    tolerations: Sequence[Toleration] = ()


def _keywords(seed: NodeSeed | PodSeed) -> dict[str, Any]:
    """The seed's fields as keyword arguments (nested values kept as they are)."""
    return {field.name: getattr(seed, field.name) for field in fields(seed)}


class MemorySeeder:
    """Seeds an InMemoryCluster."""

    def __init__(self, memory: InMemoryCluster) -> None:
        self.memory = memory

    def add_node(self, name: str, **node: Any) -> Node:
        return self.memory.add_node(name, **_keywords(NodeSeed(**node)))

    def add_pod(self, namespace: str, name: str, node_name: str, **pod: Any) -> Pod:
        return self.memory.add_pod(namespace, name, node_name, **_keywords(PodSeed(**pod)))


class EmulatorSeeder:
    """Seeds the Kubernetes API emulator, in the objects' wire form."""

    def __init__(self, emulator: KubeEmulator) -> None:
        self.emulator = emulator

    def add_node(self, name: str, **node: Any) -> Node:
        seed = NodeSeed(**node)
        added = self.emulator.add_node(
            name,
            labels=seed.labels,
            unschedulable=seed.unschedulable,
            ready=seed.ready,
            internal_ip=seed.internal_ip,
            taints=[{"key": t.key, "value": t.value, "effect": t.effect} for t in seed.taints],
            allocatable=quantities(seed.allocatable) if seed.allocatable else None,
            deleting=seed.deleting,
        )
        return node_from_object(added)

    def add_pod(self, namespace: str, name: str, node_name: str, **pod: Any) -> Pod:
        seed = PodSeed(**pod)
        owners = [
            {
                "apiVersion": "apps/v1",
                "kind": owner.kind,
                "name": owner.name,
                "uid": f"uid-{owner.name}",
                "controller": owner.controller,
            }
            for owner in seed.owners
        ]
        added = self.emulator.add_pod(
            namespace,
            name,
            node_name,
            labels=seed.labels,
            owners=owners,
            phase=str(seed.phase),
            annotations=seed.annotations,
            service_account=seed.service_account,
            ready=seed.ready,
            spec_fields=_scheduling_spec(seed),
        )
        return pod_from_object(added)


def quantities(amount: Resources) -> dict[str, str]:
    """`amount` as Kubernetes quantities."""
    return {"cpu": f"{amount.cpu_millis}m", "memory": str(amount.memory_bytes)}


def _scheduling_spec(seed: PodSeed) -> dict[str, Any]:
    """The spec fields a Pod with the seed's requests, selector and tolerations has."""
    container: dict[str, Any] = {"name": "main", "image": "registry.local/app:1"}
    if not seed.requests.is_zero:
        container["resources"] = {"requests": quantities(seed.requests)}
    spec: dict[str, Any] = {"containers": [container]}
    if seed.node_selector:
        spec["nodeSelector"] = dict(seed.node_selector)
    if seed.tolerations:
        spec["tolerations"] = [
            {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
            for t in seed.tolerations
        ]
    return spec

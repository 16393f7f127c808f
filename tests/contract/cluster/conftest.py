"""One port suite, two clusters: every test here runs against InMemoryCluster and against
KubernetesCluster talking HTTP to the Kubernetes emulator, so the two cannot drift apart.

A backend offers the cluster's ports (`backend.cluster`) plus the setup an administrator or
a workload controller would do (add nodes, pods, budgets; issue tokens), in domain terms.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

import pytest

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.kubernetes.resources.pods import budget_from_object
from brupop.adapters.kubernetes.tokens.service_accounts import service_account_from_object
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import (
    ClusterEvent,
    EventSubject,
    EventType,
    OwnerReference,
    ServiceAccount,
    WatchBookmark,
    WatchEvent,
)
from brupop.domain.safety.evicted_workloads import WorkloadRef
from brupop.domain.shadow import ShadowSpec
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.lease_store import LeaseStore
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.cluster.update_policy_repository import UpdatePolicyRepository
from brupop.ports.cluster.workload_replicas import WorkloadReplicas
from brupop.ports.tokens.token_reviewer import TokenReviewer
from brupop.ports.tokens.token_verifier import ServiceAccountSource
from tests.support.cluster_seeder import ClusterSeeder, EmulatorSeeder, MemorySeeder
from tests.support.kube_api_rules import BUDGETS, EVENTS, PODS, POLICIES, SERVICE_ACCOUNTS
from tests.support.kube_emulator_server import EmulatorServer

NAMESPACE = "brupop-bottlerocket-aws"
T = TypeVar("T")


class Ports(Protocol):
    """The cluster ports both clusters expose as attributes."""

    @property
    def shadows(self) -> ShadowRepository: ...
    @property
    def policies(self) -> UpdatePolicyRepository: ...
    @property
    def nodes(self) -> NodeRepository: ...
    @property
    def pods(self) -> PodRepository: ...
    @property
    def token_reviewer(self) -> TokenReviewer: ...
    @property
    def leases(self) -> LeaseStore: ...
    @property
    def events(self) -> EventRecorder: ...
    @property
    def workloads(self) -> WorkloadReplicas: ...
    @property
    def service_accounts(self) -> ServiceAccountSource: ...


class Backend(ClusterSeeder, Protocol):
    """A cluster under test and the means to set it up."""

    name: str
    cluster: Ports

    def set_node_ready(self, name: str, ready: bool) -> None:
        """The node's kubelet reports its Ready condition."""

    def set_pod_ready(self, namespace: str, name: str, ready: bool) -> None:
        """The pod's kubelet reports its Ready condition."""

    def put_workload(self, workload: WorkloadRef, ready_replicas: int, node_name: str) -> None:
        """The workload exists with `ready_replicas` ready (pods on `node_name` if it needs
        pods to say so)."""

    def add_disruption_budget(
        self, namespace: str, name: str, selector: Mapping[str, str], *, min_available: int
    ) -> None: ...

    def add_budget_spec(self, namespace: str, name: str, spec: Mapping[str, Any]) -> None:
        """A PodDisruptionBudget with this policy/v1 `spec`, as an administrator writes it."""

    def remove_pod(self, namespace: str, name: str) -> None: ...

    def set_pod_deleting(self, namespace: str, name: str, at: datetime) -> None:
        """Delete the pod while a finalizer holds it, its grace period ending `at`."""

    def add_service_account(self, namespace: str, name: str) -> ServiceAccount: ...

    def remove_service_account(self, namespace: str, name: str) -> None: ...

    def issue_token(self, namespace: str, pod_name: str, audiences: tuple[str, ...]) -> str: ...

    def issue_user_token(self, username: str, audiences: tuple[str, ...]) -> str: ...

    def apply_policy(self, obj: Mapping[str, Any]) -> None:
        """Create or change a policy object as `kubectl apply` would (its status is kept)."""

    def delete_policy(self, name: str, namespace: str = NAMESPACE) -> None: ...

    def forget_history(self) -> None:
        """Make every resourceVersion seen so far too old to watch from."""

    def recorded_events(self) -> list[ClusterEvent]: ...

    def eviction_grace_periods(self) -> dict[str, int | None]:
        """`namespace/name` -> the grace period each eviction asked for (None: the pod's own)."""


class MemoryBackend(MemorySeeder):
    name = "memory"

    def __init__(self) -> None:
        super().__init__(InMemoryCluster(NAMESPACE))
        self.cluster: Ports = self.memory

    def set_node_ready(self, name: str, ready: bool) -> None:
        self.memory.set_node_ready(name, ready)

    def set_pod_ready(self, namespace: str, name: str, ready: bool) -> None:
        self.memory.set_pod_ready(namespace, name, ready)

    def put_workload(self, workload: WorkloadRef, ready_replicas: int, node_name: str) -> None:
        # The in-memory cluster counts a workload's ready pods: make that many of them ready.
        self.memory.workloads.registered.add(workload)
        owner = OwnerReference(kind=workload.kind, name=workload.name, controller=True)
        owned = sorted(pod.name for pod in self.memory.pods.store.values() if owner in pod.owners)
        for index in range(len(owned), ready_replicas):
            name = f"{workload.name}-{index}"
            self.memory.add_pod(workload.namespace, name, node_name, owners=[owner])
            owned.append(name)
        for index, name in enumerate(owned):
            self.memory.set_pod_ready(workload.namespace, name, index < ready_replicas)

    def add_disruption_budget(
        self, namespace: str, name: str, selector: Mapping[str, str], *, min_available: int
    ) -> None:
        self.memory.add_disruption_budget(namespace, name, selector, min_available=min_available)

    def add_budget_spec(self, namespace: str, name: str, spec: Mapping[str, Any]) -> None:
        meta = {"name": name, "namespace": namespace}
        self.memory.pods.set_budget(budget_from_object({"metadata": meta, "spec": dict(spec)}))

    def remove_pod(self, namespace: str, name: str) -> None:
        self.memory.pods.delete(namespace, name)

    def set_pod_deleting(self, namespace: str, name: str, at: datetime) -> None:
        self.memory.set_pod_deleting(namespace, name, at)

    def add_service_account(self, namespace: str, name: str) -> ServiceAccount:
        return self.memory.service_accounts.add(namespace, name)

    def remove_service_account(self, namespace: str, name: str) -> None:
        self.memory.service_accounts.remove(namespace, name)

    def issue_token(self, namespace: str, pod_name: str, audiences: tuple[str, ...]) -> str:
        return self.memory.issue_token(namespace, pod_name, audiences=audiences)

    def issue_user_token(self, username: str, audiences: tuple[str, ...]) -> str:
        return self.memory.issue_user_token(username, audiences=audiences)

    def apply_policy(self, obj: Mapping[str, Any]) -> None:
        self.memory.policies.apply(obj)

    def delete_policy(self, name: str, namespace: str = NAMESPACE) -> None:
        self.memory.policies.delete(name, namespace)

    def forget_history(self) -> None:
        # Each in-memory store keeps a bounded history; outgrow it with throwaway changes.
        filler = self.memory.add_node("history-filler")
        self.memory.shadows.create(filler.name, filler.uid)
        spec = ShadowSpec()
        for index in range(2100):
            self.memory.nodes.set_labels(filler.name, {"turn": str(index)})
            self.memory.shadows.replace_spec(f"brs-{filler.name}", spec, None)
            filler_policy = {"metadata": {"name": filler.name}, "spec": {"paused": index % 2 == 0}}
            self.memory.policies.apply(filler_policy)
        self.memory.remove_node(filler.name)
        self.memory.policies.delete(filler.name)

    def recorded_events(self) -> list[ClusterEvent]:
        return list(self.memory.events.recorded)

    def eviction_grace_periods(self) -> dict[str, int | None]:
        return dict(self.memory.pods.eviction_grace_periods)


class KubernetesBackend(EmulatorSeeder):
    name = "kubernetes"

    def __init__(self, server: EmulatorServer) -> None:
        super().__init__(server.emulator)
        self.server = server
        self.kubernetes = KubernetesCluster(server.api_client(), NAMESPACE)
        self.cluster: Ports = self.kubernetes

    def set_node_ready(self, name: str, ready: bool) -> None:
        self.emulator.set_node_ready(name, ready)

    def set_pod_ready(self, namespace: str, name: str, ready: bool) -> None:
        self.emulator.set_pod_ready(namespace, name, ready)

    def put_workload(self, workload: WorkloadRef, ready_replicas: int, node_name: str) -> None:
        self.emulator.put_workload(workload.kind, workload.namespace, workload.name, ready_replicas)

    def add_disruption_budget(
        self, namespace: str, name: str, selector: Mapping[str, str], *, min_available: int
    ) -> None:
        self.emulator.add_disruption_budget(namespace, name, selector, min_available=min_available)

    def add_budget_spec(self, namespace: str, name: str, spec: Mapping[str, Any]) -> None:
        budget = {"metadata": {"name": name, "namespace": namespace}, "spec": dict(spec)}
        self.emulator.put_object(
            BUDGETS, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget"} | budget
        )

    def remove_pod(self, namespace: str, name: str) -> None:
        self.emulator.remove_object(PODS, namespace, name)

    def set_pod_deleting(self, namespace: str, name: str, at: datetime) -> None:
        self.emulator.set_pod_deleting(namespace, name, at.strftime("%Y-%m-%dT%H:%M:%SZ"))

    def add_service_account(self, namespace: str, name: str) -> ServiceAccount:
        return service_account_from_object(self.emulator.add_service_account(namespace, name))

    def remove_service_account(self, namespace: str, name: str) -> None:
        self.emulator.remove_object(SERVICE_ACCOUNTS, namespace, name)

    def issue_token(self, namespace: str, pod_name: str, audiences: tuple[str, ...]) -> str:
        return self.emulator.issue_token(namespace, pod_name, audiences=audiences)

    def issue_user_token(self, username: str, audiences: tuple[str, ...]) -> str:
        return self.emulator.issue_user_token(username, audiences=audiences)

    def apply_policy(self, obj: Mapping[str, Any]) -> None:
        body = copy.deepcopy(dict(obj))
        meta = body.setdefault("metadata", {})
        meta.setdefault("namespace", NAMESPACE)
        stored = self.emulator.stored(POLICIES, meta["namespace"], meta["name"])
        body.pop("status", None)
        if stored is not None and "status" in stored:
            body["status"] = stored["status"]  # apply leaves the status subresource alone
        self.emulator.put_object(POLICIES, body)

    def delete_policy(self, name: str, namespace: str = NAMESPACE) -> None:
        self.emulator.remove_object(POLICIES, namespace, name)

    def forget_history(self) -> None:
        self.emulator.compact()

    def recorded_events(self) -> list[ClusterEvent]:
        return [
            ClusterEvent(
                shadow_name=obj["involvedObject"]["name"],
                namespace=obj["metadata"]["namespace"],
                reason=obj["reason"],
                message=obj["message"],
                type=EventType(obj["type"]),
                subject=EventSubject(obj["involvedObject"]["kind"]),
            )
            for obj in self.emulator.objects_of(EVENTS)
        ]

    def eviction_grace_periods(self) -> dict[str, int | None]:
        return _grace_periods(self.emulator.requests)


@pytest.fixture(params=["memory", "kubernetes"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "memory":
        yield MemoryBackend()
        return
    with EmulatorServer() as server:
        kube = KubernetesBackend(server)
        try:
            yield kube
        finally:
            kube.kubernetes.close()


@pytest.fixture
def cluster(backend: Backend) -> Ports:
    return backend.cluster


def _grace_periods(requests: Sequence[Any]) -> dict[str, int | None]:
    """From the eviction requests the emulator received: the grace period each asked for."""
    found: dict[str, int | None] = {}
    for request in requests:
        if request.resource is None or request.subresource != "eviction":
            continue
        options = (request.data or {}).get("deleteOptions") or {}
        found[f"{request.namespace}/{request.name}"] = options.get("gracePeriodSeconds")
    return found


PATIENT = 30.0
"""Seconds a watch may wait for the changes a test expects: ample on a loaded machine, and
spent only when they never come (`changes` stops at the count it is given)."""


def changes(
    stream: Iterable[WatchEvent[T] | WatchBookmark], count: int | None = None
) -> list[WatchEvent[T]]:
    """The changes a watch yields, without its bookmarks (which only move its resume point):
    all of them until the watch ends, or the first `count` (the stream is then closed)."""
    found: list[WatchEvent[T]] = []
    items = iter(stream)
    try:
        for item in items:
            if isinstance(item, WatchEvent):
                found.append(item)
            if count is not None and len(found) >= count:
                break
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()
    return found

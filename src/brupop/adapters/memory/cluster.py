"""InMemoryCluster: a thread-safe Kubernetes stand-in implementing every cluster port.

It is the product's embedded default (`brupop simulate`) and the tests' cluster. Node deletion
garbage-collects the node's shadow and pods, as ownerReferences and the kubelet would.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping

from brupop.adapters.memory.leases import InMemoryEventRecorder, InMemoryLeaseStore
from brupop.adapters.memory.nodes import InMemoryNodeRepository
from brupop.adapters.memory.pods import InMemoryPodRepository, pod_key
from brupop.adapters.memory.shadows import InMemoryShadowRepository
from brupop.adapters.memory.store import Revisions
from brupop.adapters.memory.tokens import InMemoryTokenReviewer
from brupop.adapters.memory.update_policies import InMemoryUpdatePolicyRepository
from brupop.adapters.memory.workloads import InMemoryWorkloadReplicas
from brupop.adapters.system.clock import SystemClock
from brupop.domain.cluster import Node, OwnerReference, Pod, PodDisruptionBudget, PodPhase
from brupop.domain.shadow import DEFAULT_NAMESPACE, shadow_name
from brupop.ports.clock import Clock

AGENT_AUDIENCE = "brupop-apiserver"


class InMemoryCluster:
    """Nodes, pods, budgets, shadows, update policies, tokens, leases and events, all in this
    process."""

    def __init__(self, namespace: str = DEFAULT_NAMESPACE, clock: Clock | None = None) -> None:
        self.namespace = namespace
        self.clock: Clock = clock or SystemClock()
        self.revisions = Revisions()
        self.nodes = InMemoryNodeRepository(self.revisions)
        self.pods = InMemoryPodRepository(self.revisions, self.nodes.store)
        self.nodes.on_schedulable = lambda _name: self.pods.schedule_pending()
        self.shadows = InMemoryShadowRepository(self.revisions, namespace)
        self.policies = InMemoryUpdatePolicyRepository(self.revisions, namespace)
        self.workloads = InMemoryWorkloadReplicas(self.pods.store)
        self.token_reviewer = InMemoryTokenReviewer(self.clock, self.pods.store)
        self.leases = InMemoryLeaseStore(self.revisions)
        self.events = InMemoryEventRecorder()

    # --- setup: what an administrator or a workload controller would do -----------------

    def add_node(
        self,
        name: str,
        *,
        labels: Mapping[str, str] | None = None,
        uid: str | None = None,
        unschedulable: bool = False,
        annotations: Mapping[str, str] | None = None,
        ready: bool = True,
        internal_ip: str | None = None,
    ) -> Node:
        node = Node(
            name=name,
            uid=uid or str(uuid.uuid4()),
            labels=dict(labels or {}),
            annotations=dict(annotations or {}),
            unschedulable=unschedulable,
            ready=ready,
            internal_ip=internal_ip,
        )
        created = self.nodes.store.create(name, node)
        self.pods.schedule_pending()
        return created

    def set_node_ready(self, name: str, ready: bool) -> Node:
        """Set the Node's Ready condition, as its kubelet would."""
        return self.nodes.store.update(name, lambda n: dataclasses.replace(n, ready=ready))

    def set_pod_ready(self, namespace: str, name: str, ready: bool) -> Pod:
        """Set the Pod's Ready condition, as its kubelet would."""
        return self.pods.store.update(
            pod_key(namespace, name), lambda p: dataclasses.replace(p, ready=ready)
        )

    def remove_node(self, name: str) -> None:
        """Delete the Node; its shadow and pods go with it."""
        with self.revisions.condition:
            self.nodes.store.delete(name)
            if self.shadows.store.find(shadow_name(name)) is not None:
                self.shadows.store.delete(shadow_name(name))
            self.pods.remove_pods_on(name)

    def add_pod(
        self,
        namespace: str,
        name: str,
        node_name: str | None,
        *,
        labels: Mapping[str, str] | None = None,
        owners: Iterable[OwnerReference] = (),
        phase: PodPhase = PodPhase.RUNNING,
        annotations: Mapping[str, str] | None = None,
        service_account: str | None = None,
        ready: bool = True,
    ) -> Pod:
        pod = Pod(
            name=name,
            namespace=namespace,
            uid=str(uuid.uuid4()),
            node_name=node_name,
            phase=phase,
            labels=dict(labels or {}),
            annotations=dict(annotations or {}),
            owners=tuple(owners),
            service_account=service_account,
            ready=ready,
        )
        return self.pods.add(pod)

    def add_disruption_budget(
        self,
        namespace: str,
        name: str,
        selector: Mapping[str, str],
        *,
        min_available: int | None = None,
        max_unavailable: int | None = None,
    ) -> PodDisruptionBudget:
        budget = PodDisruptionBudget(
            name=name,
            namespace=namespace,
            selector=dict(selector),
            min_available=min_available,
            max_unavailable=max_unavailable,
        )
        self.pods.set_budget(budget)
        return budget

    def remove_disruption_budget(self, namespace: str, name: str) -> None:
        self.pods.remove_budget(namespace, name)

    def issue_token(
        self,
        namespace: str,
        pod_name: str,
        *,
        audiences: tuple[str, ...] = (AGENT_AUDIENCE,),
        ttl_seconds: float = 3600,
    ) -> str:
        """A projected service-account token bound to that pod."""
        pod = self.pods.get(namespace, pod_name)
        return self.token_reviewer.issue_for_pod(pod, audiences, ttl_seconds)

    def issue_user_token(
        self,
        username: str,
        *,
        audiences: tuple[str, ...] = (AGENT_AUDIENCE,),
        ttl_seconds: float = 3600,
    ) -> str:
        """A token bound to no pod (a user or a bare service account)."""
        return self.token_reviewer.issue_for_user(username, audiences, ttl_seconds)

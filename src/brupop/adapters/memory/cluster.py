"""InMemoryCluster: a thread-safe Kubernetes stand-in implementing every cluster port.

It is the product's embedded default (`brupop simulate`) and the tests' cluster. Node deletion
garbage-collects the node's shadow and pods, as ownerReferences and the kubelet would.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime

from brupop.adapters.memory.agent_pods import InMemoryAgentPods
from brupop.adapters.memory.leases import InMemoryEventRecorder, InMemoryLeaseStore
from brupop.adapters.memory.nodes import InMemoryNodeRepository
from brupop.adapters.memory.pods import InMemoryPodRepository, pod_key
from brupop.adapters.memory.service_accounts import InMemoryServiceAccounts
from brupop.adapters.memory.shadows import InMemoryShadowRepository
from brupop.adapters.memory.store import Revisions
from brupop.adapters.memory.tokens import InMemoryTokenReviewer
from brupop.adapters.memory.update_policies import InMemoryUpdatePolicyRepository
from brupop.adapters.memory.workloads import InMemoryWorkloadReplicas
from brupop.adapters.system.clock import SystemClock
from brupop.domain.cluster.disruption_budget import IntOrPercent
from brupop.domain.cluster.label_selector import Requirement
from brupop.domain.cluster.objects import (
    Node,
    OwnerReference,
    Pod,
    PodDisruptionBudget,
    PodPhase,
    Resources,
    Taint,
    Toleration,
)
from brupop.domain.cluster.resources import NO_RESOURCES
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
        self.service_accounts = InMemoryServiceAccounts(self.revisions, namespace)
        self.token_reviewer = InMemoryTokenReviewer(
            self.clock, self.pods.store, self.service_accounts.store
        )
        self.agent_pods = InMemoryAgentPods(self.pods.store, namespace)
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
        taints: Iterable[Taint] = (),
        allocatable: Resources | None = None,
        created_at: datetime | None = None,
        deleting: bool = False,
    ) -> Node:
        """A new Node; created now (by the cluster's clock) unless `created_at` says when."""
        node = Node(
            name=name,
            uid=uid or str(uuid.uuid4()),
            labels=dict(labels or {}),
            annotations=dict(annotations or {}),
            unschedulable=unschedulable,
            ready=ready,
            internal_ip=internal_ip,
            taints=tuple(taints),
            allocatable=allocatable,
            created_at=created_at or self.clock.now(),
            deleting=deleting,
        )
        created = self.nodes.store.create(name, node)
        self.pods.schedule_pending()
        return created

    def set_node_ready(self, name: str, ready: bool) -> Node:
        """Set the Node's Ready condition, as its kubelet would."""
        return self.nodes.store.update(name, lambda n: dataclasses.replace(n, ready=ready))

    def set_node_taints(self, name: str, taints: Iterable[Taint]) -> Node:
        """Replace the Node's taints, as an autoscaler or an administrator would."""
        changed = tuple(taints)
        return self.nodes.store.update(name, lambda n: dataclasses.replace(n, taints=changed))

    def set_node_deleting(self, name: str) -> Node:
        """Mark the Node as being deleted (a finalizer still holds it)."""
        return self.nodes.store.update(name, lambda n: dataclasses.replace(n, deleting=True))

    def set_pod_ready(self, namespace: str, name: str, ready: bool) -> Pod:
        """Set the Pod's Ready condition, as its kubelet would."""
        return self.pods.store.update(
            pod_key(namespace, name), lambda p: dataclasses.replace(p, ready=ready)
        )

    def set_pod_deleting(self, namespace: str, name: str, at: datetime | None = None) -> Pod:
        """Delete the Pod while a finalizer holds it: it stays, terminating, its grace period
        ending `at` (its deletionTimestamp; now by the cluster's clock unless given)."""
        when = at or self.clock.now()
        return self.pods.store.update(
            pod_key(namespace, name),
            lambda p: dataclasses.replace(p, terminating=True, deletion_timestamp=when),
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
        requests: Resources = NO_RESOURCES,
        node_selector: Mapping[str, str] | None = None,
        tolerations: Iterable[Toleration] = (),
        created_at: datetime | None = None,
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
            requests=requests,
            node_selector=dict(node_selector or {}),
            tolerations=tuple(tolerations),
            created_at=created_at,
        )
        if service_account is not None:  # kube-apiserver admits no pod without its account
            self.service_accounts.ensure(namespace, service_account)
        return self.pods.add(pod)

    def add_disruption_budget(
        self,
        namespace: str,
        name: str,
        selector: Mapping[str, str],
        *,
        min_available: IntOrPercent | None = None,
        max_unavailable: IntOrPercent | None = None,
        expressions: tuple[Requirement, ...] = (),
    ) -> PodDisruptionBudget:
        budget = PodDisruptionBudget(
            name=name,
            namespace=namespace,
            selector=dict(selector),
            min_available=min_available,
            max_unavailable=max_unavailable,
            expressions=expressions,
        )
        self.pods.set_budget(budget)
        return budget

    def remove_disruption_budget(self, namespace: str, name: str) -> None:
        self.pods.remove_budget(namespace, name)

    @property
    def token_verifier(self) -> InMemoryTokenReviewer:
        """Local token verification's fake: the same checks as its TokenReview, pod included
        (whatever reviewer the cluster holds now, so a test's slow one stands for both)."""
        return self.token_reviewer

    def issue_token(
        self,
        namespace: str,
        pod_name: str,
        *,
        audiences: tuple[str, ...] = (AGENT_AUDIENCE,),
        ttl_seconds: float = 3600,
    ) -> str:
        """A projected service-account token bound to that pod (its ServiceAccount is made
        when missing: kube-apiserver admits no pod without one)."""
        pod = self.pods.get(namespace, pod_name)
        self.service_accounts.ensure(namespace, pod.service_account or "default")
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

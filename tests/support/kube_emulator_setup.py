"""Setup calls for the Kubernetes emulator, shaped like InMemoryCluster's: add nodes, pods,
budgets, and issue service-account tokens, as an administrator or a controller would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tests.support.kube_api_rules import (
    BUDGETS,
    NODES,
    PODS,
    SERVICE_ACCOUNTS,
    WORKLOADS,
    Kind,
)
from tests.support.kube_emulator_auth import TokenAuthority

JSON = dict[str, Any]


class ClusterSetup:
    """Mixed into the emulator: writes objects straight into its store (no HTTP)."""

    tokens: TokenAuthority

    def put_object(self, kind: Kind, obj: JSON) -> JSON:
        raise NotImplementedError

    def stored(self, kind: Kind, namespace: str | None, name: str) -> JSON | None:
        raise NotImplementedError

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
        taints: Iterable[JSON] = (),
        allocatable: Mapping[str, str] | None = None,
        deleting: bool = False,
    ) -> JSON:
        """A Node; `deleting` sets a deletionTimestamp, as when a finalizer holds a deleted
        Node (the emulator itself deletes at once)."""
        meta: JSON = {"name": name, "labels": dict(labels or {})}
        if uid:
            meta["uid"] = uid
        if annotations:
            meta["annotations"] = dict(annotations)
        if deleting:
            meta["deletionTimestamp"] = "2026-01-05T10:00:00Z"
            meta["finalizers"] = ["example.com/hold"]
        spec: JSON = {"unschedulable": True} if unschedulable else {}
        if taints:
            spec["taints"] = [dict(taint) for taint in taints]
        status: JSON = {"conditions": [_condition("Ready", ready)]}
        if internal_ip:
            status["addresses"] = [{"type": "InternalIP", "address": internal_ip}]
        if allocatable:
            status["allocatable"] = dict(allocatable)
        node = {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec}
        return self.put_object(NODES, node | {"status": status})

    def set_node_ready(self, name: str, ready: bool) -> JSON:
        """Set the Node's Ready condition, as its kubelet would."""
        node = self.stored(NODES, None, name)
        if node is None:
            raise KeyError(f"no node {name}")
        node.setdefault("status", {})["conditions"] = [_condition("Ready", ready)]
        return self.put_object(NODES, node)

    def set_pod_ready(self, namespace: str, name: str, ready: bool) -> JSON:
        """Set the Pod's Ready condition, as its kubelet would."""
        pod = self.stored(PODS, namespace, name)
        if pod is None:
            raise KeyError(f"no pod {namespace}/{name}")
        pod.setdefault("status", {})["conditions"] = [_condition("Ready", ready)]
        return self.put_object(PODS, pod)

    def set_pod_deleting(self, namespace: str, name: str, deletion_timestamp: str) -> JSON:
        """Delete the Pod while a finalizer holds it: it stays with this deletionTimestamp (the
        end of its grace period), as kube-apiserver keeps it."""
        pod = self.stored(PODS, namespace, name)
        if pod is None:
            raise KeyError(f"no pod {namespace}/{name}")
        meta = pod["metadata"]
        meta["deletionTimestamp"] = deletion_timestamp
        meta.setdefault("finalizers", ["example.com/hold"])
        return self.put_object(PODS, pod)

    def add_service_account(self, namespace: str, name: str) -> JSON:
        """A ServiceAccount (a fresh UID)."""
        meta = {"name": name, "namespace": namespace}
        account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}
        return self.put_object(SERVICE_ACCOUNTS, account)

    def put_workload(self, kind: str, namespace: str, name: str, ready_replicas: int) -> JSON:
        """Create or change a ReplicaSet, StatefulSet or ReplicationController with that many
        ready replicas, as its controller would report them."""
        api_version = "v1" if kind == "ReplicationController" else "apps/v1"
        meta = {"name": name, "namespace": namespace}
        status: JSON = {"replicas": ready_replicas}
        if ready_replicas:  # the API leaves readyReplicas out when it is 0
            status["readyReplicas"] = ready_replicas
        obj = {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": {}}
        return self.put_object(WORKLOADS[kind], obj | {"status": status})

    def add_pod(
        self,
        namespace: str,
        name: str,
        node_name: str | None,
        *,
        labels: Mapping[str, str] | None = None,
        owners: Iterable[JSON] = (),
        phase: str = "Running",
        annotations: Mapping[str, str] | None = None,
        service_account: str | None = None,
        ready: bool = True,
        spec_fields: Mapping[str, Any] | None = None,
    ) -> JSON:
        """A Pod with one container; `spec_fields` adds to (or replaces parts of) its spec."""
        meta: JSON = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
        if annotations:
            meta["annotations"] = dict(annotations)
        if owners:
            meta["ownerReferences"] = list(owners)
        spec: JSON = {"containers": [{"name": "main", "image": "registry.local/app:1"}]}
        spec.update(spec_fields or {})
        if node_name:
            spec["nodeName"] = node_name
        if service_account:
            spec["serviceAccountName"] = service_account
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
        status = {"phase": phase, "conditions": [_condition("Ready", ready)]}
        return self.put_object(PODS, pod | {"status": status})

    def add_disruption_budget(
        self,
        namespace: str,
        name: str,
        selector: Mapping[str, str],
        *,
        min_available: int | None = None,
        max_unavailable: int | None = None,
    ) -> JSON:
        spec: JSON = {"selector": {"matchLabels": dict(selector)}}
        if min_available is not None:
            spec["minAvailable"] = min_available
        if max_unavailable is not None:
            spec["maxUnavailable"] = max_unavailable
        budget = {"metadata": {"name": name, "namespace": namespace}, "spec": spec}
        return self.put_object(
            BUDGETS, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget"} | budget
        )

    def issue_token(
        self, namespace: str, pod_name: str, *, audiences: tuple[str, ...] = ("brupop-apiserver",)
    ) -> str:
        """A projected service-account token bound to that pod."""
        pod = self.stored(PODS, namespace, pod_name)
        if pod is None:
            raise KeyError(f"no pod {namespace}/{pod_name}")
        node = self.stored(NODES, None, pod["spec"].get("nodeName", ""))
        return self.tokens.issue_for_pod(pod, node, audiences)

    def issue_user_token(
        self, username: str, *, audiences: tuple[str, ...] = ("brupop-apiserver",)
    ) -> str:
        return self.tokens.issue_for_user(username, audiences)


def _condition(kind: str, true: bool) -> JSON:
    return {"type": kind, "status": "True" if true else "False"}

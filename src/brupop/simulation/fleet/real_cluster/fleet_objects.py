"""The simulated fleet as real objects: kwok-managed Nodes, pods bound to them by
`spec.nodeName`, their owners (so the garbage collector keeps them and the disruption
controller can count them) and PodDisruptionBudgets; agent tokens from TokenRequest.

`build_fleet` calls it as it calls the in-memory cluster. Agent pods are created at once (their
tokens are bound to them); the workloads wait for `finish()`, which knows each owner's size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubernetes.client import AppsV1Api, CoreV1Api, PolicyV1Api

from brupop.domain.cluster.disruption_budget import IntOrPercent
from brupop.domain.cluster.objects import OwnerReference, Resources
from brupop.domain.cluster.resources import NO_RESOURCES
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess
from brupop.simulation.fleet.real_cluster.ownership import marked
from brupop.simulation.fleet.real_cluster.start_up import FleetStartUp

KWOK_ANNOTATION = "kwok.x-k8s.io/node"
IMAGE = "registry.invalid/brupop-simulated:1"  # never pulled: kwok plays the kubelet
_NO_NODE = {"brupop.bottlerocket.aws/simulated-daemonset": "none"}  # no DaemonSet controller
JSON = dict[str, Any]


class ApiFleet:
    """The FleetCluster over a real API server."""

    def __init__(self, access: ClusterAccess, namespace: str) -> None:
        self._access = access
        self._namespace = namespace
        self._core = CoreV1Api(access.admin)
        self._apps = AppsV1Api(access.admin)
        self._owner_uids: dict[tuple[str, str, str], str] = {}  # (namespace, kind, name)
        self._pod_uids: dict[tuple[str, str], tuple[str, str]] = {}  # uid, service account
        self._pods: list[tuple[JSON, tuple[OwnerReference, ...]]] = []
        self._budgets: list[JSON] = []
        self._addresses: dict[str, str] = {}  # the InternalIP each Node is given once Ready
        self.nodes: list[str] = []

    @property
    def namespace(self) -> str:
        return self._namespace

    def add_node(
        self,
        name: str,
        *,
        labels: Mapping[str, str] | None = None,
        allocatable: Resources | None = None,
        internal_ip: str | None = None,
    ) -> JSON:
        amounts = _amounts(allocatable or Resources(cpu_millis=8000, memory_bytes=16 * 1024**3))
        amounts["pods"] = "110"
        body = marked(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": dict(labels or {}),
                    "annotations": {KWOK_ANNOTATION: "fake"},
                },
                "status": {"allocatable": amounts, "capacity": dict(amounts)},
            }
        )
        self._core.create_node(body)
        self.nodes.append(name)
        if internal_ip is not None:
            self._addresses[name] = internal_ip
        return body

    def add_pod(
        self,
        namespace: str,
        name: str,
        node_name: str | None,
        *,
        labels: Mapping[str, str] | None = None,
        owners: Iterable[OwnerReference] = (),
        annotations: Mapping[str, str] | None = None,
        service_account: str | None = None,
        requests: Resources = NO_RESOURCES,
    ) -> JSON:
        account = service_account or "default"
        container: JSON = {"name": "main", "image": IMAGE}
        if requests != NO_RESOURCES:
            container["resources"] = {"requests": _amounts(requests)}
        spec = {
            "nodeName": node_name,
            "serviceAccountName": account,
            "automountServiceAccountToken": False,
            "containers": [container],
        }
        meta = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
        if annotations:
            meta["annotations"] = dict(annotations)
        pod = marked({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
        owned_by = tuple(owners)
        if any(owner.kind == "DaemonSet" for owner in owned_by):  # an agent: its token waits
            self._create_pod(pod, owned_by)
        else:
            self._pods.append((pod, owned_by))
        return pod

    def add_disruption_budget(
        self,
        namespace: str,
        name: str,
        selector: Mapping[str, str],
        *,
        min_available: IntOrPercent | None = None,
        max_unavailable: IntOrPercent | None = None,
    ) -> JSON:
        spec: JSON = {"selector": {"matchLabels": dict(selector)}}
        if min_available is not None:
            spec["minAvailable"] = min_available
        if max_unavailable is not None:
            spec["maxUnavailable"] = max_unavailable
        meta = {"name": name, "namespace": namespace}
        budget = marked(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": meta,
                "spec": spec,
            }
        )
        self._budgets.append(budget)
        return budget

    def issue_token(self, namespace: str, pod_name: str, *, ttl_seconds: float = 3600) -> str:
        uid, account = self._pod_uids[namespace, pod_name]
        return self._access.pod_token(namespace, pod_name, uid, int(ttl_seconds), account)

    def finish(self) -> None:
        """Create the workloads and their budgets, then wait until kwok has every Node and pod
        Ready and the disruption controller has counted every budget."""
        sizes: dict[tuple[str, str, str], int] = {}
        for pod, owners in self._pods:
            for owner in owners:
                key = (pod["metadata"]["namespace"], owner.kind, owner.name)
                sizes[key] = sizes.get(key, 0) + 1
        for pod, owners in self._pods:
            self._create_pod(pod, owners, sizes)
        policy = PolicyV1Api(self._access.admin)
        for budget in self._budgets:
            policy.create_namespaced_pod_disruption_budget(budget["metadata"]["namespace"], budget)
        FleetStartUp(
            self._core, policy, len(self.nodes), len(self._pod_uids), self._addresses
        ).wait()

    def _create_pod(
        self,
        pod: JSON,
        owners: tuple[OwnerReference, ...],
        sizes: Mapping[tuple[str, str, str], int] | None = None,
    ) -> None:
        namespace = pod["metadata"]["namespace"]
        references = []
        for owner in owners:
            uid = self._owner(namespace, owner, pod["metadata"]["labels"], sizes or {})
            references.append(
                {"apiVersion": "apps/v1", "kind": owner.kind, "name": owner.name, "uid": uid,
                 "controller": owner.controller}
            )  # fmt: skip
        pod["metadata"]["ownerReferences"] = references
        created = self._core.create_namespaced_pod(namespace, pod)
        account = pod["spec"]["serviceAccountName"]
        self._pod_uids[namespace, pod["metadata"]["name"]] = (created.metadata.uid, account)

    def _owner(
        self,
        namespace: str,
        owner: OwnerReference,
        labels: Mapping[str, str],
        sizes: Mapping[tuple[str, str, str], int],
    ) -> str:
        """The owner's uid, creating it (with the size `sizes` gives it) on first sight."""
        key = (namespace, owner.kind, owner.name)
        if key not in self._owner_uids:
            body = owner_object(namespace, owner, labels, sizes.get(key, 1))
            create = {
                "DaemonSet": self._apps.create_namespaced_daemon_set,
                "ReplicaSet": self._apps.create_namespaced_replica_set,
                "StatefulSet": self._apps.create_namespaced_stateful_set,
            }[owner.kind]
            self._owner_uids[key] = create(namespace, body).metadata.uid
        return self._owner_uids[key]


def owner_object(
    namespace: str, owner: OwnerReference, labels: Mapping[str, str], replicas: int
) -> JSON:
    """A workload object for pods that exist already; nothing here runs its controller."""
    template: JSON = {"metadata": {"labels": dict(labels)}, "spec": {
        "containers": [{"name": "main", "image": IMAGE}]}}  # fmt: skip
    spec: JSON = {"selector": {"matchLabels": dict(labels)}, "template": template}
    if owner.kind == "DaemonSet":
        template["spec"]["nodeSelector"] = dict(_NO_NODE)
    else:
        spec["replicas"] = replicas
    if owner.kind == "StatefulSet":
        spec["serviceName"] = owner.name
    meta = {"name": owner.name, "namespace": namespace}
    return marked({"apiVersion": "apps/v1", "kind": owner.kind, "metadata": meta, "spec": spec})


def _amounts(resources: Resources) -> dict[str, str]:
    return {"cpu": f"{resources.cpu_millis}m", "memory": str(resources.memory_bytes)}

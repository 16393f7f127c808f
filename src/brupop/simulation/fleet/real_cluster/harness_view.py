"""The real cluster as simulate's harness sees it (the administrator's client): the shadows
and Nodes the observer and the report read, the policy the scenarios apply, the Events the
report reads back, and the kubelet's Ready conditions that `--unhealthy` turns False.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubernetes.client import CoreV1Api, CustomObjectsApi
from kubernetes.client.exceptions import ApiException

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.kubernetes.resources.update_policies import PLURAL, VERSION
from brupop.adapters.system.clock import SystemClock
from brupop.domain.cluster.objects import ClusterEvent
from brupop.domain.policy.policy_object import PolicySnapshot, UpdatePolicy
from brupop.domain.shadow import API_GROUP, KIND
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess
from brupop.simulation.fleet.real_cluster.fleet_objects import KWOK_ANNOTATION

_CONFLICT = 409
_NOT_FOUND = 404
_ATTEMPTS = 5
_STRATEGIC = "application/strategic-merge-patch+json"
_MERGE = "application/merge-patch+json"


class AppliedPolicies:
    """The policies read as the controller reads them; applied as `kubectl apply` would."""

    def __init__(self, cluster: KubernetesCluster) -> None:
        self._read = cluster.policies
        self._api = CustomObjectsApi(cluster.api_client)
        self._namespace = cluster.namespace

    def read(self) -> PolicySnapshot:
        return self._read.read()

    def get(self) -> UpdatePolicy:
        return self._read.get()

    def apply(self, obj: Mapping[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name"))
        where = (API_GROUP, VERSION, self._namespace, PLURAL)
        for _ in range(_ATTEMPTS):
            metadata = {**(obj.get("metadata") or {}), "name": name, "namespace": self._namespace}
            body = {**obj, "metadata": metadata}
            try:
                current = self._api.get_namespaced_custom_object(*where, name)
            except ApiException as error:
                if error.status != _NOT_FOUND:
                    raise
                self._api.create_namespaced_custom_object(*where, body)
                return
            body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            try:
                self._api.replace_namespaced_custom_object(*where, name, body)
                return
            except ApiException as error:
                if error.status != _CONFLICT:  # the controller wrote its status meanwhile
                    raise
        raise RuntimeError(f"the update policy {name} kept changing under simulate's writes")

    def delete(self, name: str) -> None:
        where = (API_GROUP, VERSION, self._namespace, PLURAL)
        self._api.delete_namespaced_custom_object(*where, name)


class ShadowEvents:
    """The Events recorded against shadows in brupop's namespace, oldest first."""

    def __init__(self, core: CoreV1Api, namespace: str) -> None:
        self._core = core
        self._namespace = namespace

    @property
    def recorded(self) -> Sequence[ClusterEvent]:
        found = self._core.list_namespaced_event(
            self._namespace, field_selector=f"involvedObject.kind={KIND}"
        ).items
        found.sort(key=lambda e: (e.metadata.creation_timestamp, e.metadata.name))
        return [
            ClusterEvent(
                shadow_name=e.involved_object.name,
                namespace=self._namespace,
                reason=e.reason or "",
                message=e.message or "",
            )
            for e in found
        ]


class HarnessView:
    """The SimulatedCluster over the real API server."""

    def __init__(self, access: ClusterAccess, namespace: str) -> None:
        self._admin = KubernetesCluster(access.admin, namespace, component="brupop-simulate")
        self._core = access.core
        self.clock = SystemClock()
        self.policies = AppliedPolicies(self._admin)
        self.events = ShadowEvents(self._core, namespace)

    @property
    def namespace(self) -> str:
        return self._admin.namespace

    @property
    def shadows(self) -> ShadowRepository:
        return self._admin.shadows

    @property
    def nodes(self) -> NodeRepository:
        return self._admin.nodes

    def set_node_ready(self, name: str, ready: bool) -> None:
        """The Node's Ready condition, as its kubelet would set it; kwok lets go of the Node
        first, or it would make it Ready again."""
        release = {"metadata": {"annotations": {KWOK_ANNOTATION: None}}}
        self._core.patch_node(name, release, _content_type=_MERGE)
        status = "True" if ready else "False"
        condition = {"type": "Ready", "status": status, "reason": "SimulatedByBrupop"}
        body = {"status": {"conditions": [condition]}}
        self._core.patch_node_status(name, body, _content_type=_STRATEGIC)

    def set_pod_ready(self, namespace: str, name: str, ready: bool) -> None:
        status = "True" if ready else "False"
        conditions = [{"type": kind, "status": status} for kind in ("Ready", "ContainersReady")]
        body = {"status": {"conditions": conditions}}
        self._core.patch_namespaced_pod_status(name, namespace, body, _content_type=_STRATEGIC)

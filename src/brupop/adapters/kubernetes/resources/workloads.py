"""KubernetesWorkloadReplicas: `status.readyReplicas` of a ReplicaSet, StatefulSet or
ReplicationController, read with one GET each (get on those resources is all it needs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes.client import AppsV1Api, CoreV1Api

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.domain.safety.evicted_workloads import WorkloadRef
from brupop.ports.cluster.workload_replicas import WorkloadReplicas
from brupop.ports.errors import NotFoundError


class KubernetesWorkloadReplicas:
    """The WorkloadReplicas port over apps/v1 and v1 workload objects."""

    def __init__(self, calls: ApiCalls) -> None:
        self._calls = calls
        apps = AppsV1Api(calls.api_client)
        core = CoreV1Api(calls.api_client)
        self._readers: dict[str, Callable[..., Any]] = {
            "ReplicaSet": apps.read_namespaced_replica_set,
            "StatefulSet": apps.read_namespaced_stateful_set,
            "ReplicationController": core.read_namespaced_replication_controller,
        }

    def ready_replicas(self, workload: WorkloadRef) -> int | None:
        reader = self._readers.get(workload.kind)
        if reader is None:
            return None  # not a kind whose replicas come back: nothing to wait for
        try:
            obj = self._calls.json(f"get {workload}", reader, workload.name, workload.namespace)
        except NotFoundError:
            return None
        ready = (obj.get("status") or {}).get("readyReplicas")
        return ready if isinstance(ready, int) and not isinstance(ready, bool) else 0


_: type[WorkloadReplicas] = KubernetesWorkloadReplicas

"""InMemoryWorkloadReplicas: a workload's ready replicas, counted from the pods it owns.

The in-memory cluster has no ReplicaSet objects: a workload exists while a pod names it as its
controlling owner (or a test registered it), and its ready replicas are its Running, Ready pods
that are not being deleted, as the ReplicaSet controller would count them.
"""

from __future__ import annotations

from brupop.adapters.memory.store import VersionedStore
from brupop.domain.cluster.objects import Pod, PodPhase
from brupop.domain.safety.evicted_workloads import WorkloadRef
from brupop.ports.cluster.workload_replicas import WorkloadReplicas
from brupop.ports.errors import UnavailableError


def _owned_by(pod: Pod, workload: WorkloadRef) -> bool:
    return pod.namespace == workload.namespace and any(
        owner.controller and owner.kind == workload.kind and owner.name == workload.name
        for owner in pod.owners
    )


class InMemoryWorkloadReplicas:
    """The WorkloadReplicas port over the in-memory pods."""

    def __init__(self, pods: VersionedStore[Pod]) -> None:
        self._pods = pods
        self.registered: set[WorkloadRef] = set()
        self.unavailable = False

    def ready_replicas(self, workload: WorkloadRef) -> int | None:
        if self.unavailable:
            raise UnavailableError("the in-memory cluster is set to fail workload reads")
        owned = [pod for pod in self._pods.values() if _owned_by(pod, workload)]
        if not owned and workload not in self.registered:
            return None
        return sum(
            1
            for pod in owned
            if pod.phase is PodPhase.RUNNING and pod.ready and not pod.terminating
        )


_: type[WorkloadReplicas] = InMemoryWorkloadReplicas

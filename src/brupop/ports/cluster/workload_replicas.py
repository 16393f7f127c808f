"""WorkloadReplicas: how many ready replicas a workload (ReplicaSet, StatefulSet, ...) has.

The apiserver reads it just before a drain evicts anything (to record the counts on the Node),
and the controller reads it again for the health gate's evictedWorkloadsRecovered check.
"""

from __future__ import annotations

from typing import Protocol

from brupop.domain.safety.evicted_workloads import WorkloadRef


class WorkloadReplicas(Protocol):
    """Ready replicas by workload; UnavailableError (or another PortError) when it cannot tell."""

    def ready_replicas(self, workload: WorkloadRef) -> int | None:
        """The workload's ready replicas now; None when the workload no longer exists."""
        ...

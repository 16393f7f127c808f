"""Before a drain evicts anything, record on the Node how many ready replicas each workload it
is about to evict has, so the controller's health gate can wait until they are back.

The record (domain/safety/evicted_workloads.py) is written on every drain, empty when nothing with a
workload is evicted, so a record from an earlier update is never compared with. When the
replicas cannot be read, the record is removed instead, and the gate has nothing to wait for:
an unreadable workload must not block the drain the agent is waiting on.
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog

from brupop.domain.cluster.objects import Pod
from brupop.domain.safety.evicted_workloads import (
    EVICTED_WORKLOADS_ANNOTATION,
    WorkloadRef,
    encode_record,
    workloads_of,
)
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.workload_replicas import WorkloadReplicas
from brupop.ports.errors import PortError

log = structlog.get_logger(__name__)


class EvictedWorkloadRecorder:
    """Writes the evicted-workloads annotation of a node about to be drained."""

    def __init__(self, nodes: NodeRepository, workloads: WorkloadReplicas) -> None:
        self._nodes = nodes
        self._workloads = workloads

    def record(self, node_name: str, evicting: Iterable[Pod]) -> dict[WorkloadRef, int] | None:
        """Record the ready replicas of the workloads of `evicting`; the counts written, or
        None when they could not be read (the record is then removed)."""
        try:
            counts = self._counts(workloads_of(evicting))
        except PortError as error:
            log.warning("drain.workloads_unreadable", node=node_name, error=str(error))
            self._write(node_name, None)
            return None
        self._write(node_name, encode_record(counts))
        log.info("drain.workloads_recorded", node=node_name, workloads=len(counts))
        return counts

    def _counts(self, refs: Iterable[WorkloadRef]) -> dict[WorkloadRef, int]:
        counts: dict[WorkloadRef, int] = {}
        for ref in refs:
            ready = self._workloads.ready_replicas(ref)
            if ready is not None:
                counts[ref] = ready
        return counts

    def _write(self, node_name: str, value: str | None) -> None:
        try:
            self._nodes.set_annotations(node_name, {EVICTED_WORKLOADS_ANNOTATION: value})
        except PortError as error:
            log.warning("drain.workloads_not_recorded", node=node_name, error=str(error))

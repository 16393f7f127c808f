"""InMemoryLeaseStore and InMemoryEventRecorder: leader-election Leases and recorded Events."""

from __future__ import annotations

import dataclasses
import threading

from brupop.adapters.memory.store import Revisions, VersionedStore
from brupop.domain.cluster.objects import ClusterEvent, Lease


class InMemoryLeaseStore:
    """The LeaseStore port: create once, replace only from the current resourceVersion."""

    def __init__(self, revisions: Revisions) -> None:
        self.store: VersionedStore[Lease] = VersionedStore(
            revisions,
            "lease",
            with_version=lambda lease, rv: dataclasses.replace(lease, resource_version=rv),
            version_of=lambda lease: lease.resource_version,
        )

    def get(self, namespace: str, name: str) -> Lease:
        return self.store.get(f"{namespace}/{name}")

    def create(self, lease: Lease) -> Lease:
        return self.store.create(f"{lease.namespace}/{lease.name}", lease)

    def replace(self, lease: Lease) -> Lease:
        key = f"{lease.namespace}/{lease.name}"
        return self.store.replace(key, lease, expected_version=lease.resource_version)


class InMemoryEventRecorder:
    """The EventRecorder port: keeps every Event in `recorded`, in order."""

    def __init__(self) -> None:
        self.recorded: list[ClusterEvent] = []
        self._lock = threading.Lock()

    def record(self, event: ClusterEvent) -> None:
        with self._lock:
            self.recorded.append(event)

"""LeaseStore: coordination.k8s.io Leases, for the controller's leader election."""

from __future__ import annotations

from typing import Protocol

from brupop.domain.cluster.objects import Lease


class LeaseStore(Protocol):
    """Get, create and conditionally replace a Lease."""

    def get(self, namespace: str, name: str) -> Lease:
        """The Lease; NotFoundError when absent."""
        ...

    def create(self, lease: Lease) -> Lease:
        """Create it; AlreadyExistsError when someone else did first."""
        ...

    def replace(self, lease: Lease) -> Lease:
        """Write it if still at `lease.resource_version`; ConflictError otherwise."""
        ...

"""EventRecorder: Kubernetes Events that tell a node's update story on its shadow, or what the
controller made of an update policy on that policy (`ClusterEvent.subject`)."""

from __future__ import annotations

from typing import Protocol

from brupop.domain.cluster.objects import ClusterEvent


class EventRecorder(Protocol):
    """Record one Event; failures to record are logged by the adapter, never raised."""

    def record(self, event: ClusterEvent) -> None:
        """Post `event` against its object (a shadow unless `event.subject` says otherwise)."""
        ...

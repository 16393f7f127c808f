"""NodeOperations: what the agent may ask for its own node. Every call is idempotent."""

from __future__ import annotations

from typing import Protocol


class NodeOperations(Protocol):
    """Cordon and drain, uncordon, and load-balancer exclusion of this agent's node."""

    def cordon_and_drain(self) -> None:
        """Cordon, then evict the pods that must leave; raises DrainFailedError if they cannot."""
        ...

    def uncordon(self) -> None:
        """Make the node schedulable again (unless an administrator had cordoned it)."""
        ...

    def exclude_from_load_balancers(self) -> None:
        """Label the node out of external load balancers."""
        ...

    def restore_to_load_balancers(self) -> None:
        """Remove that label (only if brupop added it)."""
        ...

"""What simulate asks of the cluster it runs over, whichever backend holds it.

`FleetCluster` is what the fleet is built on (the in-memory cluster, or the objects created on
a real API server); `SimulatedCluster` is what the harness reads and changes while the rollout
runs (the observer, the scenarios, the report), beside what the controller and apiserver read
through their own ports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from brupop.domain.cluster.disruption_budget import IntOrPercent
from brupop.domain.cluster.objects import ClusterEvent, OwnerReference, Resources
from brupop.domain.policy.policy_object import PolicySnapshot, UpdatePolicy
from brupop.ports.clock import Clock
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository


class ClusterRefused(Exception):
    """The cluster is not one simulate may use (it holds objects simulate did not create);
    one line, and the run stops before it changes anything."""


class FleetCluster(Protocol):
    """Where `build_fleet` puts the Nodes, pods, budgets and agent tokens."""

    @property
    def namespace(self) -> str: ...

    def add_node(
        self,
        name: str,
        *,
        labels: Mapping[str, str] | None = None,
        allocatable: Resources | None = None,
        internal_ip: str | None = None,
    ) -> object: ...

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
        requests: Resources = ...,
    ) -> object: ...

    def add_disruption_budget(
        self,
        namespace: str,
        name: str,
        selector: Mapping[str, str],
        *,
        min_available: IntOrPercent | None = None,
        max_unavailable: IntOrPercent | None = None,
    ) -> object: ...

    def issue_token(self, namespace: str, pod_name: str, *, ttl_seconds: float = ...) -> str:
        """A token bound to that (agent) pod, for the apiserver's audience."""
        ...


class PolicyObjects(Protocol):
    """The update policies, read as the controller reads them and applied as `kubectl apply`."""

    def read(self) -> PolicySnapshot: ...

    def get(self) -> UpdatePolicy: ...

    def apply(self, obj: Mapping[str, Any]) -> object: ...

    def delete(self, name: str) -> object: ...


class RecordedEvents(Protocol):
    """The Events the controller and the apiserver recorded, oldest first."""

    @property
    def recorded(self) -> Sequence[ClusterEvent]: ...


class SimulatedCluster(Protocol):
    """The cluster as the harness sees it: what it reads for the report and what the
    scenarios change (a kubelet's Ready conditions, the policy)."""

    @property
    def namespace(self) -> str: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def shadows(self) -> ShadowRepository: ...
    @property
    def nodes(self) -> NodeRepository: ...
    @property
    def policies(self) -> PolicyObjects: ...
    @property
    def events(self) -> RecordedEvents: ...

    def set_node_ready(self, name: str, ready: bool) -> object: ...

    def set_pod_ready(self, namespace: str, name: str, ready: bool) -> object: ...

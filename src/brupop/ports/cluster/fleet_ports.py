"""FleetPorts: the cluster ports that list the fleet (shadows, Nodes, pods, update policies).

`brupop plan` reads only these; the controller's and the apiserver's clusters have them too.
"""

from __future__ import annotations

from typing import Protocol

from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.cluster.update_policy_repository import UpdatePolicyRepository


class FleetPorts(Protocol):
    """The fleet's repositories (InMemoryCluster and KubernetesCluster have them)."""

    @property
    def shadows(self) -> ShadowRepository: ...
    @property
    def nodes(self) -> NodeRepository: ...
    @property
    def pods(self) -> PodRepository: ...
    @property
    def policies(self) -> UpdatePolicyRepository: ...

"""The cluster a brupop process talks to, chosen once for both the controller and the apiserver.

BRUPOP_CLUSTER names it: `kubernetes` (the cluster this process runs in, or the kubeconfig's)
or `memory` (the embedded in-memory cluster). ClusterChoice is the sub-container both processes'
containers hold; ControllerCluster and ApiserverCluster say which of the cluster's ports each
process needs, which InMemoryCluster and KubernetesCluster both have.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from dependency_injector import containers, providers

from brupop.ports.clock import Clock
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.fleet_ports import FleetPorts
from brupop.ports.cluster.lease_store import LeaseStore
from brupop.ports.cluster.workload_replicas import WorkloadReplicas
from brupop.ports.tokens.token_reviewer import TokenReviewer
from brupop.ports.tokens.token_verifier import AgentPodSource, ServiceAccountSource, TokenVerifier

if TYPE_CHECKING:
    from brupop.adapters.kubernetes.cluster import KubernetesCluster
    from brupop.adapters.memory.cluster import InMemoryCluster


class ControllerCluster(FleetPorts, Protocol):
    """The cluster ports the controller needs: the fleet's, and more."""

    @property
    def leases(self) -> LeaseStore: ...
    @property
    def events(self) -> EventRecorder: ...
    @property
    def workloads(self) -> WorkloadReplicas: ...


class ApiserverCluster(FleetPorts, Protocol):
    """The cluster ports the apiserver needs: the fleet's, and more."""

    @property
    def token_reviewer(self) -> TokenReviewer: ...
    @property
    def token_verifier(self) -> TokenVerifier: ...
    @property
    def agent_pods(self) -> AgentPodSource: ...
    @property
    def service_accounts(self) -> ServiceAccountSource: ...
    @property
    def workloads(self) -> WorkloadReplicas: ...
    @property
    def events(self) -> EventRecorder: ...


def memory_cluster(namespace: str, clock: Clock | None) -> InMemoryCluster:
    """The embedded in-memory cluster; imported only when chosen, like the official client."""
    from brupop.adapters.memory.cluster import InMemoryCluster

    return InMemoryCluster(namespace, clock=clock)


def kubernetes_cluster(
    namespace: str, component: str, request_timeout_seconds: float, lease_timeout_seconds: float
) -> KubernetesCluster:
    """The real cluster; the official client is imported only when this one is chosen.

    UnavailableError when no configuration is found (neither in a pod nor a kubeconfig).
    """
    from brupop.adapters.kubernetes.cluster import KubernetesCluster

    return KubernetesCluster.from_environment(
        namespace,
        component=component,
        request_timeout_seconds=request_timeout_seconds,
        lease_timeout_seconds=lease_timeout_seconds,
    )


class ClusterChoice(containers.DeclarativeContainer):
    """The cluster adapter `kind` (BRUPOP_CLUSTER) names, for brupop's `namespace`; its Events
    are signed by `component`."""

    kind = providers.Dependency(instance_of=str)
    namespace = providers.Dependency(instance_of=str)
    component = providers.Dependency(instance_of=str)
    clock: providers.Dependency[Clock] = providers.Dependency()
    # How long a Kubernetes call may wait (connecting, then each read), and a Lease's call:
    # the controller derives both from its Lease (ControllerConfig); the apiserver keeps these.
    request_timeout_seconds = providers.Dependency(instance_of=float, default=30.0)
    lease_timeout_seconds = providers.Dependency(instance_of=float, default=30.0)
    cluster = providers.Selector(
        kind,
        memory=providers.Singleton(memory_cluster, namespace, clock),
        kubernetes=providers.Singleton(
            kubernetes_cluster,
            namespace,
            component,
            request_timeout_seconds,
            lease_timeout_seconds,
        ),
    )

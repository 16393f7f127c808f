"""KubernetesBackend: simulate's cluster is a real API server of its own.

Connecting checks that the cluster is simulate's (ClusterRefused otherwise), removes what an
earlier run left, and installs the chart's namespace and RBAC. The fleet is then created as
real objects, the apiserver runs in this process as the chart's apiserver ServiceAccount (and
the CRDs are installed with their conversion webhook pointing at it), and each controller
replica runs as the chart's controller ServiceAccount: RBAC is enforced for real.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.dynamic import DynamicClient

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.system.clock import SystemClock
from brupop.domain.shadow import DEFAULT_NAMESPACE
from brupop.entrypoints.apiserver.container import EVENT_COMPONENT as APISERVER_COMPONENT
from brupop.entrypoints.controller.container import EVENT_COMPONENT as CONTROLLER_COMPONENT
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.fleet import components
from brupop.simulation.fleet.certificates import LOOPBACK_HOST, TlsFiles
from brupop.simulation.fleet.real_cluster.chart_objects import (
    PLACEHOLDER_URL,
    brupop_crds,
    chart_rbac,
    create_all,
    wait_established,
)
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess, connect
from brupop.simulation.fleet.real_cluster.fleet_objects import ApiFleet
from brupop.simulation.fleet.real_cluster.harness_view import HarnessView
from brupop.simulation.fleet.real_cluster.ownership import (
    refuse_foreign,
    remove_simulated,
)
from brupop.simulation.fleet.real_cluster.replacements import ReplacementPods

APISERVER_ACCOUNT = "brupop-apiserver-service-account"
CONTROLLER_ACCOUNT = "brupop-controller-service-account"
_TOKEN_MARGIN_SECONDS = 3600


def free_loopback_port() -> int:
    """A port free now on 127.0.0.1 (the apiserver binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK_HOST, 0))
        return int(probe.getsockname()[1])


class KubernetesBackend:
    """The ClusterBackend over the kubeconfig's API server."""

    def __init__(
        self, access: ClusterAccess, dynamic: DynamicClient, options: SimulationOptions
    ) -> None:
        self._access = access
        self._dynamic = dynamic
        self._options = options
        self._namespace = DEFAULT_NAMESPACE
        self._token_seconds = int(options.timeout) + _TOKEN_MARGIN_SECONDS
        self._view = HarnessView(access, self._namespace)
        self._fleet = ApiFleet(access, self._namespace)
        self._replacements = ReplacementPods(access.core)
        self._clients: list[ApiClient] = []
        self._controller_cluster: KubernetesCluster | None = None

    @classmethod
    def connect(cls, options: SimulationOptions, work_dir: Path) -> KubernetesBackend:
        """Reach the cluster, refuse it unless it is simulate's, clear it and install RBAC."""
        choice = options.cluster
        assert choice.kubeconfig is not None and choice.manifest is not None
        access = connect(choice.kubeconfig, choice.context)
        try:
            rbac = chart_rbac(choice.manifest, DEFAULT_NAMESPACE)
            dynamic = DynamicClient(access.admin, cache_file=str(work_dir / "discovery.json"))
            refuse_foreign(dynamic, rbac + brupop_crds(DEFAULT_NAMESPACE, PLACEHOLDER_URL, b""))
            remove_simulated(dynamic)
            create_all(dynamic, rbac)
        except BaseException:
            access.close()
            raise
        return cls(access, dynamic, options)

    @property
    def cluster(self) -> HarnessView:
        return self._view

    @property
    def fleet_cluster(self) -> ApiFleet:
        return self._fleet

    def fleet_built(self) -> None:
        self._fleet.finish()
        self._replacements.start()

    def start_apiserver(self, tls: TlsFiles) -> components.RunningApiserver:
        """The CRDs, converted by the apiserver's port; then the apiserver there, as its
        ServiceAccount (its shadow feed finds the CRD served from its first watch)."""
        port = free_loopback_port()
        url = f"https://{LOOPBACK_HOST}:{port}"
        crds = brupop_crds(self._namespace, url, tls.ca_cert.read_bytes())
        create_all(self._dynamic, crds)
        wait_established(self._dynamic, [crd["metadata"]["name"] for crd in crds])
        cluster = self._as(APISERVER_ACCOUNT, APISERVER_COMPONENT)
        return components.start_apiserver(
            cluster, tls, self._options, namespace=self._namespace, port=port
        )

    def apply_policy(self, policy: Mapping[str, Any]) -> None:
        self._view.policies.apply(policy)

    def new_controller(self) -> components.ControllerHandle:
        """A fresh replica as the controller's ServiceAccount (one client for every replica)."""
        if self._controller_cluster is None:
            self._controller_cluster = self._as(CONTROLLER_ACCOUNT, CONTROLLER_COMPONENT)
        cluster = self._controller_cluster
        return components.controller_over(
            cluster,
            self._options,
            namespace=self._namespace,
            clock=SystemClock(),
        )

    def close(self, *, keep: bool) -> None:
        """Release the clients; unless `keep`, remove everything the run made."""
        self._replacements.stop()
        for client in self._clients:
            client.close()
        try:
            if not keep:
                remove_simulated(self._dynamic)
        finally:
            self._access.close()

    def _as(self, account: str, component: str) -> KubernetesCluster:
        client = self._access.as_service_account(self._namespace, account, self._token_seconds)
        self._clients.append(client)
        return KubernetesCluster(client, self._namespace, component=component)

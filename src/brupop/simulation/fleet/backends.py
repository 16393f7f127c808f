"""The cluster a simulation runs over: the in-memory one (the default) or a real API server.

Each backend holds the fleet, starts the apiserver and gives controller replicas over its
cluster; everything else in simulate (agents, observer, scenarios, report) is the same code
reading the same ports.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.system.shared_clock import SharedClock
from brupop.cli.fleet_description.simulated_cluster import FleetCluster, SimulatedCluster
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.fleet import components
from brupop.simulation.fleet.certificates import TlsFiles


class ClusterBackend(Protocol):
    """One run's cluster, from the empty fleet to its removal."""

    @property
    def cluster(self) -> SimulatedCluster:
        """What the harness reads and the scenarios change."""
        ...

    @property
    def fleet_cluster(self) -> FleetCluster:
        """Where `build_fleet` adds the fleet."""
        ...

    def fleet_built(self) -> None:
        """The fleet is complete: make it real and wait until it is up."""
        ...

    def start_apiserver(self, tls: TlsFiles) -> components.RunningApiserver: ...

    def apply_policy(self, policy: Mapping[str, Any]) -> None: ...

    def new_controller(self) -> components.ControllerHandle:
        """A fresh controller replica over the cluster, not yet started."""
        ...

    def close(self, *, keep: bool) -> None:
        """Release the cluster; `keep` leaves what the run made there (a kept work dir)."""
        ...


class MemoryBackend:
    """The in-memory cluster: nothing to install, nothing to remove."""

    def __init__(self, options: SimulationOptions, clock: SharedClock | None = None) -> None:
        self._options = options
        self._clock = clock
        self._cluster = InMemoryCluster(clock=clock)

    @property
    def cluster(self) -> InMemoryCluster:
        return self._cluster

    @property
    def fleet_cluster(self) -> InMemoryCluster:
        return self._cluster

    def fleet_built(self) -> None:
        pass

    def start_apiserver(self, tls: TlsFiles) -> components.RunningApiserver:
        cluster = self._cluster
        return components.start_apiserver(
            cluster, tls, self._options, namespace=cluster.namespace, clock=self._clock
        )

    def apply_policy(self, policy: Mapping[str, Any]) -> None:
        self._cluster.policies.apply(policy)

    def new_controller(self) -> components.ControllerHandle:
        return components.new_controller(self._cluster, self._options)

    def close(self, *, keep: bool) -> None:
        pass


def choose_backend(
    options: SimulationOptions, work_dir: Path, clock: SharedClock | None = None
) -> ClusterBackend:
    """The in-memory cluster on the run's `clock`, or with --kubeconfig the real one on its
    own (ClusterRefused if it is not simulate's own)."""
    if options.cluster.kubeconfig is None:
        return MemoryBackend(options, clock)
    # Only this path loads the Kubernetes client (about a second of start-up).
    from brupop.simulation.fleet.real_cluster.backend import KubernetesBackend

    return KubernetesBackend.connect(options, work_dir)

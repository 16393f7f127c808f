"""Where `brupop plan` reads its fleet: the live cluster, or a simulated one in memory.

The live cluster is reached as every command reaches it (`cluster_loader`: `--kubeconfig`,
`--context`, else as kubectl finds it) through the controller's own Kubernetes adapter; the
controller's limit is read from its `/status`, as `brupop status` reads it.

The simulated fleet is built as `brupop simulate` builds it (`fleet.nodes.build_fleet`, over an
InMemoryCluster), and each node's shadow is written as its agent's first report would be: Idle
on `--from-version`, offered `--to-version`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.cli.cluster_loader import ClusterTarget, reach_cluster
from brupop.cli.fleet_description.nodes import build_fleet
from brupop.cli.plan.flags import SimulatedFleet
from brupop.cli.status.reaching import (
    ControllerServiceAddress,
    StatusUnavailable,
    read_through_api,
)
from brupop.domain.rollout.concurrency import ConcurrencyLimit, ConcurrencyLimitError
from brupop.domain.shadow import ShadowStatus
from brupop.domain.states import UpdateState


def live_cluster(target: ClusterTarget, namespace: str, timeout: float) -> KubernetesCluster:
    """The cluster of `target`, reached as every command reaches it (ClusterUnusable when the
    kubeconfig cannot be used or its API server does not answer)."""
    configuration = reach_cluster(target, timeout)
    return KubernetesCluster(
        ApiClient(configuration), namespace, component="brupop-plan",
        request_timeout_seconds=timeout,
    )  # fmt: skip


def controller_limit(target: ClusterTarget, namespace: str, timeout: float) -> ConcurrencyLimit:
    """The MAX_CONCURRENT_UPDATE the controller applies, from its `/status` through the API
    server's service proxy (StatusUnavailable when it does not answer with one)."""
    configuration = reach_cluster(target, timeout)
    document = read_through_api(configuration, ControllerServiceAddress(namespace), timeout)
    value = document.get("max_concurrent_update")
    try:
        return ConcurrencyLimit.parse(value if isinstance(value, str) else "")
    except ConcurrencyLimitError:
        raise StatusUnavailable("the controller's /status has no max_concurrent_update") from None


def simulated_cluster(fleet: SimulatedFleet, namespace: str) -> InMemoryCluster:
    """The fleet `brupop simulate` would start from, every agent's first report written."""
    cluster = InMemoryCluster(namespace)
    names = fleet.node_names()
    with tempfile.TemporaryDirectory(prefix="brupop-plan-") as work_dir:
        build_fleet(
            cluster, names, Path(work_dir), blocked_drains=fleet.block_drain, shape=fleet.shape
        )
    status = ShadowStatus(
        current_version=fleet.from_version,
        target_version=fleet.to_version,
        current_state=UpdateState.IDLE,
    )
    for name in names:
        shadow = cluster.shadows.create(name, cluster.nodes.get(name).uid)
        cluster.shadows.update_status(shadow.name, status)
    return cluster

"""Where `brupop plan` reads its fleet: the live cluster, or a simulated one in memory.

The live cluster is reached as kubectl reaches it (in a pod, its service account; else
`--kubeconfig FILE`, $KUBECONFIG or ~/.kube/config) through the controller's own Kubernetes
adapter. A kubeconfig that cannot be used is one line (SourceError, exit 2): the client's
loader raises whatever its parsing meets (a YAML error, a TypeError on a list where a map
belongs, ...), so every failure of the loader is turned into that line here.

The simulated fleet is built as `brupop simulate` builds it (`fleet.nodes.build_fleet`, over an
InMemoryCluster), and each node's shadow is written as its agent's first report would be: Idle
on `--from-version`, offered `--to-version`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from kubernetes import config as kube_config
from kubernetes.client import ApiClient, Configuration

from brupop.adapters.kubernetes.cluster import KubernetesCluster, bounded, load_configuration
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.printable import printable
from brupop.domain.shadow import ShadowStatus
from brupop.domain.states import UpdateState
from brupop.entrypoints.plan.flags import SimulatedFleet
from brupop.entrypoints.simulate.fleet.nodes import build_fleet
from brupop.ports.errors import UnavailableError

ERROR_MAX_LENGTH = 200


class SourceError(Exception):
    """The fleet cannot be read from where the flags point; the message says why."""


def live_cluster(kubeconfig: Path | None, namespace: str, timeout: float) -> KubernetesCluster:
    """The cluster of `kubeconfig` (None: as kubectl finds it); SourceError when unusable."""
    try:
        configuration = _configuration(kubeconfig)
    except SourceError:
        raise
    except UnavailableError:
        raise SourceError(
            "no Kubernetes configuration: set KUBECONFIG, create ~/.kube/config or pass "
            "--kubeconfig FILE (or plan a simulated fleet with --simulate)"
        ) from None
    except Exception as error:  # the loader's own parsing errors, whatever their type
        where = str(kubeconfig) if kubeconfig is not None else "the kubeconfig"
        raise SourceError(f"{where} cannot be used: {_short(error)}") from None
    return KubernetesCluster(
        ApiClient(configuration), namespace, component="brupop-plan",
        request_timeout_seconds=timeout,
    )  # fmt: skip


def _configuration(kubeconfig: Path | None) -> Configuration:
    if kubeconfig is None:
        return load_configuration()
    if not kubeconfig.is_file():
        raise SourceError(f"--kubeconfig: {kubeconfig} is not a file")
    configuration = bounded(Configuration())
    kube_config.load_kube_config(
        config_file=str(kubeconfig), client_configuration=configuration, persist_config=False
    )
    return configuration


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


def _short(error: Exception) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return printable(text, ERROR_MAX_LENGTH)

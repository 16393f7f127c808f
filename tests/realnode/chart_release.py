"""The chart as a user installs it: `scripts/package-chart`, then `helm install` of the package
with the values a user sets (here only the image values of DIR/real-nodes-values.yaml), and
`helm uninstall`; each node opted in with its label and a host under it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from kubernetes import client

from tests.support.control_plane import bottlerocket_host
from tests.support.control_plane.processes import outlive
from tests.support.control_plane.versions import cache_root

REPOSITORY = Path(__file__).resolve().parents[2]
RELEASE = "brupop"
NAMESPACE = "brupop-bottlerocket-aws"
OPT_IN = {"bottlerocket.aws/updater-interface-version": "2.0.0"}
HELM_SECONDS = 300


def helm() -> str:
    done = subprocess.run(
        [REPOSITORY / "scripts" / "fetch-helm"], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def package(out: Path) -> Path:
    """The packaged chart, as `scripts/package-chart` makes it."""
    environment = {**os.environ, "OUT": str(out)}
    done = subprocess.run(
        [REPOSITORY / "scripts" / "package-chart"],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
        cwd=REPOSITORY,
    )
    return Path(done.stdout.strip().splitlines()[-1]).resolve()


def install(folder: Path, chart: Path) -> subprocess.CompletedProcess[str]:
    """`helm install brupop PACKAGE -f DIR/real-nodes-values.yaml` and nothing else."""
    argv = [
        helm(),
        "install",
        RELEASE,
        str(chart),
        "--kubeconfig",
        str(folder / "kubeconfig"),
        "-f",
        str(folder / "real-nodes-values.yaml"),
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=HELM_SECONDS)


def uninstall(folder: Path) -> subprocess.CompletedProcess[str]:
    argv = [helm(), "uninstall", RELEASE, "--kubeconfig", str(folder / "kubeconfig"), "--wait"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=HELM_SECONDS)


def prepare_nodes(
    folder: Path, core: client.CoreV1Api, nodes: tuple[str, ...], *, offer: bool = True
) -> None:
    """A Bottlerocket host under each node (unless `up` started one) and the opt-in label.
    With `offer` False the hosts offer no update, so that no rollout starts."""
    settings = None if offer else {"BRUPOP_SIM_TARGET_VERSION": ""}
    for node in nodes:
        if not bottlerocket_host.answers(bottlerocket_host.host_folder(folder, node) / "api.sock"):
            outlive(bottlerocket_host.start_host(folder, node, cache_root(), None, settings))
        core.patch_node(node, {"metadata": {"labels": OPT_IN}})

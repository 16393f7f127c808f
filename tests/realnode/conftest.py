"""A cluster with two real nodes (`scripts/control-plane up DIR --real-nodes 2`) for the
tests of this folder, always torn down with `down`. Collected only when tests/realnode (or a
file in it) is named on the command line. On a machine that cannot run a kubelet, or without
Go, the tier stops with one line saying why (exit status 5: nothing ran)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kubernetes import client, config

from tests.support.control_plane.processes import reap_exited
from tests.support.control_plane.real_nodes import build
from tests.support.control_plane.real_nodes.cluster import cannot_host
from tests.support.control_plane.real_nodes.images import image_archives
from tests.support.control_plane.real_nodes.layout import lock_path
from tests.support.control_plane.real_nodes.machine_lock import is_free
from tests.support.control_plane.versions import default_cache
from tests.support.opt_in_tier import leave_out_unless_named
from tests.support.polling import wait_until

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[1]
SCRIPT = REPOSITORY / "scripts" / "control-plane"
NODES = 2
UP_SECONDS = 900
MACHINE_WAIT_SECONDS = 600.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave these tests out unless this folder was asked for by path."""
    leave_out_unless_named(HERE, config, items)


def why_not_here() -> str:
    """Why this machine cannot run the tier (after building and installing what it can)."""
    if os.geteuid() != 0:
        return "the real-node tier needs root (containerd, cgroups, bridges, iptables)"
    if not Path("/sys/fs/cgroup").is_dir():
        return "the real-node tier needs cgroups, and /sys/fs/cgroup is missing"
    installed = subprocess.run(
        [REPOSITORY / "scripts" / "install-node-runtime"], capture_output=True, text=True
    )
    if installed.returncode != 0:
        return (installed.stderr.strip().splitlines() or ["install-node-runtime failed"])[-1]
    cache = default_cache()
    if cache.missing() or build.missing(cache):
        if shutil.which("go") is None:
            return "the real-node tier builds kubelet and the rest with Go, and `go` is missing"
        built = subprocess.run([SCRIPT, "build", "--real-nodes"], text=True)
        if built.returncode != 0:
            return "`scripts/control-plane build --real-nodes` failed (see above)"
    if not image_archives():
        environment = {**os.environ, "ARCHES": "amd64"}
        images = subprocess.run([REPOSITORY / "scripts" / "build-images"], env=environment)
        if images.returncode != 0:
            return "`ARCHES=amd64 scripts/build-images` failed (see above)"
    return cannot_host(cache, NODES)


@dataclass(frozen=True)
class RealCluster:
    """A running cluster with real nodes: its folder, admin API client, node names."""

    folder: Path
    api: client.ApiClient
    nodes: tuple[str, ...]

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)

    @property
    def apps(self) -> client.AppsV1Api:
        return client.AppsV1Api(self.api)

    def node_folder(self, name: str) -> Path:
        return self.folder / "nodes" / name


def wait_machine_free() -> None:
    """Another run (another test session on this machine) may hold the one real-node cluster
    the machine allows: wait for its `down`, as `up` itself refuses rather than waits."""
    wait_until(
        lambda: is_free(lock_path(default_cache().root)),
        "the machine's real-node cluster free (another run holds it)",
        seconds=MACHINE_WAIT_SECONDS,
        interval=2.0,
    )


def up(folder: Path, count: int) -> subprocess.CompletedProcess[str]:
    argv = [str(SCRIPT), "up", str(folder), "--real-nodes", str(count)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=UP_SECONDS)


def down(folder: Path) -> subprocess.CompletedProcess[str]:
    """`down DIR`, then wait for what this process started there (hosts, firewalls) and `down`
    stopped, so that none is left unwaited at exit."""
    done = subprocess.run([SCRIPT, "down", folder], capture_output=True, text=True, timeout=300)
    reap_exited()
    return done


@pytest.fixture(scope="session")
def machine_ready() -> None:
    why = why_not_here()
    if why:
        pytest.exit(f"tests/realnode did not run: {why}", returncode=5)


@pytest.fixture(scope="module")
def real_cluster(
    machine_ready: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RealCluster]:
    folder = tmp_path_factory.mktemp("real-nodes")
    wait_machine_free()
    try:
        started = up(folder, NODES)
        if started.returncode != 0:
            pytest.fail(f"up --real-nodes failed:\n{started.stdout}{started.stderr}", pytrace=False)
        api = config.new_client_from_config(config_file=str(folder / "kubeconfig"))
        names = tuple(f"real-node-{index}" for index in range(NODES))
        with api:
            yield RealCluster(folder, api, names)
    finally:
        down(folder)

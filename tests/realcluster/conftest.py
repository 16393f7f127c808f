"""A session control plane from `scripts/control-plane up` in a temporary folder, stopped
with `down` at the end. Missing binaries fail the session with one line; nothing is skipped.

These tests are collected only when tests/realcluster (or a file in it) is named on the
command line, so the default suite does not need the Go-built binaries.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kubernetes import client, config

from tests.support.control_plane.versions import default_cache
from tests.support.opt_in_tier import leave_out_unless_named
from tests.support.polling import wait_until

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parents[1] / "scripts" / "control-plane"
KWOK_ANNOTATION = {"kwok.x-k8s.io/node": "fake"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave these tests out unless this folder was asked for by path."""
    leave_out_unless_named(HERE, config, items)


@dataclass(frozen=True)
class ControlPlane:
    """A running control plane: its folder, admin kubeconfig and an admin API client."""

    folder: Path
    kubeconfig: Path
    api: client.ApiClient

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    cache = default_cache()
    missing = cache.missing()
    if missing:
        pytest.fail(
            f"{', '.join(missing)} not built: run `scripts/control-plane build`", pytrace=False
        )
    folder = tmp_path_factory.mktemp("control-plane")
    started = subprocess.run([SCRIPT, "up", folder], capture_output=True, text=True, timeout=300)
    try:
        if started.returncode != 0:
            pytest.fail(f"control-plane up failed:\n{started.stderr}", pytrace=False)
        kubeconfig = folder / "kubeconfig"
        api = config.new_client_from_config(config_file=str(kubeconfig))
        with api:
            yield ControlPlane(folder, kubeconfig, api)
    finally:
        subprocess.run([SCRIPT, "down", folder], capture_output=True, timeout=120, check=True)


@pytest.fixture(scope="session")
def fake_node(control_plane: ControlPlane) -> str:
    """A Node that kwok manages (by its annotation) and reports Ready."""
    name = "kwok-node-1"
    node = client.V1Node(metadata=client.V1ObjectMeta(name=name, annotations=KWOK_ANNOTATION))
    control_plane.core.create_node(node)
    wait_until(lambda: node_ready(control_plane.core, name), f"node {name} Ready", seconds=30)
    return name


def node_ready(core: client.CoreV1Api, name: str) -> bool:
    conditions = core.read_node_status(name).status.conditions or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


@pytest.fixture
def namespace(control_plane: ControlPlane) -> Iterator[str]:
    """A fresh namespace for one test, deleted afterwards (the namespace controller empties it)."""
    name = f"cp-{uuid.uuid4().hex[:8]}"
    control_plane.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    control_plane.core.delete_namespace(name)

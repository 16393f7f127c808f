"""KubernetesCluster.from_environment finds its cluster the way kubectl does."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path

import pytest
import yaml
from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.cluster import CONNECTIONS, KubernetesCluster, load_configuration
from brupop.ports.errors import UnavailableError
from tests.contract.kubernetes.conftest import NAMESPACE
from tests.support.kube_emulator_server import EmulatorServer


def kubeconfig(server_url: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "emulated", "cluster": {"server": server_url}}],
        "users": [{"name": "admin", "user": {"token": "admin-token"}}],
        "contexts": [{"name": "emulated", "context": {"cluster": "emulated", "user": "admin"}}],
        "current-context": "emulated",
    }


def test_outside_a_pod_the_kubeconfig_named_by_kubeconfig_is_used(
    server: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(kubeconfig(server.url)))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(path))
    server.emulator.add_node("node-a")

    cluster = KubernetesCluster.from_environment(NAMESPACE)
    try:
        assert cluster.nodes.get("node-a").name == "node-a"
    finally:
        cluster.close()
    assert server.emulator.requests[-1].headers["Authorization"] == "Bearer admin-token"


def test_without_a_pod_or_a_kubeconfig_it_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))

    with pytest.raises(UnavailableError, match="no Kubernetes configuration"):
        KubernetesCluster.from_environment(NAMESPACE)


class SilentApi:
    """A loopback HTTP server that reads each request head and never answers it."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.heads = 0
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = self.listener.accept()
                self._open.append(connection)
                if connection.recv(65536):
                    self.heads += 1

    def close(self) -> None:
        for connection in [self.listener, *self._open]:
            connection.close()


def test_a_request_that_times_out_reaches_the_api_once_not_four_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    silent = SilentApi()
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(kubeconfig(silent.url)))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(path))
    api_client = ApiClient(load_configuration())
    cluster = KubernetesCluster(api_client, NAMESPACE, request_timeout_seconds=0.3)
    try:
        with pytest.raises(UnavailableError):
            cluster.nodes.get("node-a")
    finally:
        cluster.close()
        silent.close()
    assert silent.heads == 1


def test_the_connection_pool_is_brupops_bound_not_five_per_host_cpu(
    server: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(kubeconfig(server.url)))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(path))

    configuration = load_configuration()

    assert configuration.connection_pool_maxsize == CONNECTIONS
    assert configuration.retries is False

"""KubernetesCluster.from_environment finds its cluster the way kubectl does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from brupop.adapters.kubernetes.cluster import KubernetesCluster
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

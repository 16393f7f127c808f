"""`brupop plan` on a live cluster takes the controller's limit from its `/status` (through the
API server's service proxy) and says where the limit came from; when the controller does not
answer it says it assumed 1, and `--max-concurrent` wins over both."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.cli.cluster_loader import ClusterTarget, reach_cluster
from brupop.cli.plan.main import main
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus
from brupop.domain.states import UpdateState
from tests.support.controller_surface import serve_controller
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_proxy import ServiceProxy
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.kubeconfig import write_kubeconfig
from tests.unit.services.controller.fleet import Fleet

NS = "brupop-bottlerocket-aws"
SERVICE = "brupop-controller-server"
NODES = ("node-a", "node-b", "node-c")


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, ServiceProxy]]:
    """An emulated cluster with three opted-in nodes, each with its agent's first report, and
    a kubeconfig for it; the controller's Service is declared by each test."""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    emulator = KubeEmulator()
    proxy = ServiceProxy(emulator)
    with EmulatorServer(emulator) as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        configuration = reach_cluster(ClusterTarget(kubeconfig=kubeconfig), 10.0)
        adapter = KubernetesCluster(ApiClient(configuration), NS, component="test")
        status = ShadowStatus(
            current_version="1.19.0", target_version="1.20.0", current_state=UpdateState.IDLE
        )
        for name in NODES:
            uid = f"uid-{name}"
            emulator.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE}, uid=uid)
            shadow = adapter.shadows.create(name, uid)
            adapter.shadows.update_status(shadow.name, status)
        adapter.close()
        yield kubeconfig, proxy


def _plan(kubeconfig: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, object]:
    assert main(["--kubeconfig", str(kubeconfig), "--json", "--duration", "60", *flags]) == 0
    out = capsys.readouterr().out  # the served controller logs there too, before the plan
    document: dict[str, object] = json.loads(out[out.index("{\n") :])
    return document


def test_the_limit_comes_from_the_controllers_status_and_the_plan_says_so(
    cluster: tuple[Path, ServiceProxy], capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig, proxy = cluster
    with serve_controller(Fleet(2), limit=3) as (url, _):
        proxy.add_service(NS, SERVICE, port_name="main", port=80, backend=url)
        document = _plan(kubeconfig, capsys)

    assert document["max_concurrent"] == 3
    assert document["max_concurrent_source"] == "the controller's /status"


def test_without_a_controller_the_plan_says_it_assumed_one(
    cluster: tuple[Path, ServiceProxy], capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig, _ = cluster

    document = _plan(kubeconfig, capsys)

    assert document["max_concurrent"] == 1
    source = str(document["max_concurrent_source"])
    assert source.startswith("assumed: the controller's /status did not answer: "), source


def test_max_concurrent_wins_over_the_controller(
    cluster: tuple[Path, ServiceProxy], capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig, proxy = cluster
    with serve_controller(Fleet(2), limit=3) as (url, _):
        proxy.add_service(NS, SERVICE, port_name="main", port=80, backend=url)
        document = _plan(kubeconfig, capsys, "--max-concurrent", "2")

    assert document["max_concurrent"] == 2
    assert document["max_concurrent_source"] == "--max-concurrent"

"""Two real kubelets beside the control plane: they register and are Ready, their pods weigh as
a machine's own would against this machine's other processes, pods on either node reach
Services by their DNS names and the API server through `kubernetes`, nothing leaves the machine
through the bridges, and a second cluster on the same machine is refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.realnode.conftest import RealCluster, up
from tests.realnode.workloads import create, logged, python_pod, wait_phase
from tests.support.control_plane.real_nodes.network import FORWARD_CHAIN
from tests.support.control_plane.real_nodes.node_processes import NODE_CPU_WEIGHT

# A cluster with real nodes takes a minute or more to start on a loaded machine.
pytestmark = pytest.mark.timeout(900)

SERVER = (
    "import http.server as h; h.HTTPServer(('', 8080), h.SimpleHTTPRequestHandler).serve_forever()"
)
FETCH = """
import urllib.request
answer = urllib.request.urlopen("http://web.default.svc.cluster.local:8080/", timeout=20)
print("answer:", answer.status)
"""
API = """
import ssl, urllib.request
folder = "/var/run/secrets/kubernetes.io/serviceaccount/"
tls = ssl.create_default_context(cafile=folder + "ca.crt")
token = open(folder + "token").read()
bearer = {"Authorization": "Bearer " + token}
asked = urllib.request.Request("https://kubernetes.default.svc/api", headers=bearer)
print("api:", urllib.request.urlopen(asked, context=tls, timeout=20).status)
"""
OUTSIDE = """
import socket

try:
    socket.create_connection(("198.51.100.7", 80), timeout=3)
    print("outside: connected")
except OSError as error:
    print("outside: refused or dropped:", type(error).__name__)
"""


def test_every_real_node_registers_with_its_own_kubelet_and_is_ready(
    real_cluster: RealCluster,
) -> None:
    nodes = {node.metadata.name: node for node in real_cluster.core.list_node().items}
    for index, name in enumerate(real_cluster.nodes):
        node = nodes[name]
        conditions = {each.type: each.status for each in node.status.conditions}
        addresses = {each.type: each.address for each in node.status.addresses}
        assert conditions["Ready"] == "True"
        assert node.status.node_info.kubelet_version == "v1.37.2"
        assert node.status.node_info.container_runtime_version.startswith("containerd://")
        assert addresses["InternalIP"] == f"10.245.{index}.1"
        assert not node.spec.taints


def test_each_real_nodes_pods_weigh_as_much_as_eight_busy_processes_of_the_machine(
    real_cluster: RealCluster,
) -> None:
    for name in real_cluster.nodes:
        shares = Path("/sys/fs/cgroup/cpu", f"brupop-{name}", "cpu.shares").read_text()
        assert int(shares) == 1024 * NODE_CPU_WEIGHT == 8192, name


def test_a_pod_on_one_node_reaches_a_service_on_the_other_by_its_dns_name(
    real_cluster: RealCluster,
) -> None:
    first, second = real_cluster.nodes
    core = real_cluster.core
    create(core, python_pod("web", first, SERVER, restart="Always", labels={"app": "web"}))
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080, "targetPort": 8080}]},
    }
    core.create_namespaced_service("default", service)
    wait_phase(core, "web", "Running")
    create(core, python_pod("fetch", second, FETCH, restart="OnFailure"))
    wait_phase(core, "fetch", "Succeeded", seconds=240)
    assert "answer: 200" in logged(real_cluster.node_folder(second), "fetch")


def test_a_pod_reaches_the_api_server_through_the_kubernetes_service(
    real_cluster: RealCluster,
) -> None:
    node = real_cluster.nodes[1]
    create(real_cluster.core, python_pod("api", node, API, restart="OnFailure"))
    wait_phase(real_cluster.core, "api", "Succeeded", seconds=240)
    assert "api: 200" in logged(real_cluster.node_folder(node), "api")


def dropped_from_bridges() -> int:
    listing = subprocess.run(
        ["iptables", "-w", "-L", FORWARD_CHAIN, "-v", "-x", "-n"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    first_rule = next(line for line in listing if "DROP" in line)
    return int(first_rule.split()[0])


def test_nothing_from_a_pod_is_forwarded_off_the_machine(real_cluster: RealCluster) -> None:
    node = real_cluster.nodes[0]
    before = dropped_from_bridges()
    create(real_cluster.core, python_pod("outside", node, OUTSIDE))
    wait_phase(real_cluster.core, "outside", "Succeeded", seconds=240)
    lines = logged(real_cluster.node_folder(node), "outside")
    assert any(line.startswith("outside: refused or dropped") for line in lines), lines
    assert dropped_from_bridges() > before


def test_a_second_cluster_with_real_nodes_on_the_machine_is_refused_in_one_line(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    refused = up(tmp_path / "second", 1)
    assert refused.returncode == 1
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert "already runs on this machine" in lines[0] and str(real_cluster.folder) in lines[0]
    assert not (tmp_path / "second" / "kubeconfig").exists()

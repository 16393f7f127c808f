"""One real node up: its files, its cgroup root, its mount namespace, containerd with the
images imported, then the kubelet, waited for until its healthz answers."""

from __future__ import annotations

import subprocess
import urllib.request
from pathlib import Path

from tests.support.control_plane.components import free_ports
from tests.support.control_plane.pki import Pki
from tests.support.control_plane.real_nodes.layout import PAUSE_IMAGE, NodeLayout
from tests.support.control_plane.real_nodes.node_config import write_node_files
from tests.support.control_plane.real_nodes.node_processes import (
    NodeStartError,
    binary,
    holder_pid,
    make_cgroups,
    start_holder,
    start_in_namespace,
    wait_for,
)

IMPORT_SECONDS = 300


def ctr(node: NodeLayout, *args: str, seconds: float = 30) -> subprocess.CompletedProcess[str]:
    """containerd's own client, run in the node's mount namespace (where its socket is)."""
    inside = ["nsenter", f"--mount=/proc/{holder_pid(node)}/ns/mnt", "--"]
    return subprocess.run(
        [*inside, "ctr", "-a", str(node.socket), "-n", "k8s.io", *args],
        capture_output=True,
        text=True,
        timeout=seconds,
        check=False,
    )


def start_node(node: NodeLayout, pki: Pki, cache_bin: Path, images: list[Path]) -> None:
    """Bring the node's runtime and kubelet up (a boot); images are imported when given."""
    ports = free_ports()
    write_node_files(node, pki, (ports.etcd_client, ports.etcd_peer))
    (node.folder / "run" / "healthz.port").parent.mkdir(parents=True, exist_ok=True)
    (node.folder / "run" / "healthz.port").write_text(f"{ports.etcd_peer}\n")
    make_cgroups(node)
    holder = start_holder(node)
    config = node.folder / "containerd" / "config.toml"
    start_in_namespace(node, "containerd", [binary("containerd"), "--config", str(config)], holder)
    wait_for(node, "containerd", lambda: ctr(node, "version").returncode == 0)
    for archive in images:
        imported = ctr(node, "images", "import", str(archive), seconds=IMPORT_SECONDS)
        if imported.returncode != 0:
            raise NodeStartError(f"{node.name}: importing {archive.name}: {imported.stderr[-300:]}")
    listed = ctr(node, "images", "ls", "-q").stdout.split()
    if PAUSE_IMAGE not in listed:
        raise NodeStartError(f"{node.name}: the pause image {PAUSE_IMAGE} is not imported")
    start_in_namespace(node, "kubelet", kubelet_argv(node, cache_bin), holder)
    wait_for(node, "kubelet", lambda: healthz_ok(node), seconds=90.0)


def kubelet_argv(node: NodeLayout, cache_bin: Path) -> list[str]:
    folder = node.folder
    return [
        str(cache_bin / "kubelet"),
        f"--config={folder / 'kubelet.yaml'}",
        f"--kubeconfig={folder / 'kubelet.kubeconfig'}",
        f"--hostname-override={node.name}",
        f"--node-ip={node.gateway}",
        "--v=1",
    ]


def healthz_ok(node: NodeLayout) -> bool:
    port = (node.folder / "run" / "healthz.port").read_text().strip()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False

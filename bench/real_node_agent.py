"""The agent's DaemonSet from the project's one-file manifest on a cluster's real nodes, for
bench/real_node_pods.py: its Namespace, ServiceAccount and DaemonSet unchanged but for the
image (the node's imported one, never pulled), the CA Secret it mounts, the nodes' opt-in
label, and stand-ins at the host paths it mounts where nothing serves them yet."""

from __future__ import annotations

import contextlib
import socket
import sys
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from tests.support.control_plane.real_nodes.images import image_tag  # noqa: E402

MANIFEST = REPOSITORY / "deploy" / "bottlerocket-update-operator.yaml"
LABEL = "bottlerocket.aws/updater-interface-version"


def documents(*kinds: str) -> list[dict[str, Any]]:
    with MANIFEST.open() as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc and doc["kind"] in kinds]


def host_stand_ins(root: Path) -> None:
    """A unix socket file and a file where the DaemonSet's hostPath volumes expect them."""
    for host in sorted((root / "nodes").glob("real-node-*/host")):
        sock = host / "api.sock"
        if not sock.exists():
            with socket.socket(socket.AF_UNIX) as listener:
                listener.bind(str(sock))
        apiclient = host / "apiclient"
        if not apiclient.exists():
            apiclient.write_text("")


def deploy_agent(root: Path, api: client.ApiClient) -> None:
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    host_stand_ins(root)
    (namespace,) = documents("Namespace")
    name = namespace["metadata"]["name"]
    with contextlib.suppress(ApiException):
        core.create_namespace(namespace)
    for account in documents("ServiceAccount"):
        with contextlib.suppress(ApiException):
            core.create_namespaced_service_account(name, account)
    ca = (root / "pki" / "ca.crt").read_text()
    secret = {
        "metadata": {"name": "brupop-apiserver-client-certificate"},
        "stringData": {"ca.crt": ca},
    }
    with contextlib.suppress(ApiException):
        core.create_namespaced_secret(name, secret)
    for node in core.list_node().items:
        if node.metadata.name.startswith("real-node-"):
            core.patch_node(node.metadata.name, {"metadata": {"labels": {LABEL: "2.0.0"}}})
    (daemonset,) = documents("DaemonSet")
    for container in daemonset["spec"]["template"]["spec"]["containers"]:
        container["image"] = f"localhost/brupop-agent:{image_tag()}"
        container["imagePullPolicy"] = "Never"
    apps.create_namespaced_daemon_set(name, daemonset)

"""The cluster's API side of real nodes: the kube-dns Service (its one endpoint is CoreDNS on
the first bridge), waiting until every node is Ready without the not-ready taint, and the
optional cert-manager hook (tests/support/control_plane/cert_manager.py: start/stop)."""

from __future__ import annotations

import importlib
import time
from types import ModuleType
from typing import Any

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from tests.support.control_plane.real_nodes.layout import DNS_SERVICE_IP, ClusterLayout

READY_SECONDS = 180.0
NOT_READY_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


class NotReady(Exception):
    """A node did not become Ready and schedulable in time."""


def api(cluster: ClusterLayout) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(cluster.root / "kubeconfig"))


def create_dns_service(cluster: ClusterLayout) -> None:
    ports = [("dns", "UDP"), ("dns-tcp", "TCP")]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kube-dns", "namespace": "kube-system"},
        "spec": {
            "clusterIP": DNS_SERVICE_IP,
            "ports": [{"name": name, "port": 53, "protocol": proto} for name, proto in ports],
        },
    }
    endpoints = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "kube-dns-coredns",
            "namespace": "kube-system",
            "labels": {"kubernetes.io/service-name": "kube-dns"},
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": [cluster.first.gateway], "conditions": {"ready": True}}],
        "ports": [{"name": name, "port": 53, "protocol": proto} for name, proto in ports],
    }
    with api(cluster) as session:
        client.CoreV1Api(session).create_namespaced_service("kube-system", service)
        client.DiscoveryV1Api(session).create_namespaced_endpoint_slice("kube-system", endpoints)


def node_ready(node: Any) -> bool:
    conditions = {each.type: each.status for each in (node.status.conditions or [])}
    taints = [each.key for each in (node.spec.taints or [])]
    return conditions.get("Ready") == "True" and not set(taints) & set(NOT_READY_TAINTS)


def wait_nodes_ready(cluster: ClusterLayout, seconds: float = READY_SECONDS) -> None:
    names = {node.name for node in cluster.nodes}
    deadline = time.monotonic() + seconds
    with api(cluster) as session:
        core = client.CoreV1Api(session)
        while True:
            try:
                listed = core.list_node().items
            except ApiException:
                listed = []
            ready = {each.metadata.name for each in listed if node_ready(each)}
            if names <= ready:
                return
            if time.monotonic() >= deadline:
                late = ", ".join(sorted(names - ready))
                raise NotReady(f"{late} not Ready and schedulable after {seconds:.0f} s")
            time.sleep(0.5)


def cert_manager() -> ModuleType | None:
    try:
        return importlib.import_module("tests.support.control_plane.cert_manager")
    except ModuleNotFoundError:
        return None


def start_cert_manager(cluster: ClusterLayout, cache: object) -> None:
    module = cert_manager()
    if module is not None and hasattr(module, "start"):
        module.start(cluster.root, cache)


def stop_cert_manager(cluster: ClusterLayout) -> None:
    module = cert_manager()
    if module is not None and hasattr(module, "stop"):
        module.stop(cluster.root)

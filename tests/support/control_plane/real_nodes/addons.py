"""What a cluster runs around its nodes, as host processes recorded in DIR/run like the
control plane's: kube-scheduler, a second kube-controller-manager with the controllers real
workloads need, one kube-proxy (the nodes share this machine's network namespace, so one
proxy serves them all) and CoreDNS behind the kube-dns Service."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.control_plane import probes
from tests.support.control_plane.components import free_ports
from tests.support.control_plane.lifecycle import Plan, launch
from tests.support.control_plane.processes import RunFolder
from tests.support.control_plane.real_nodes.layout import (
    CLUSTER_DOMAIN,
    ClusterLayout,
)

NODE_CONTROLLERS = (
    "daemonset-controller",
    "deployment-controller",
    "replicaset-controller",
    "endpointslice-controller",
    "node-lifecycle-controller",
    "taint-eviction-controller",
    "pod-garbage-collector-controller",
)
ADDONS = ("kube-scheduler", "kcm-nodes", "kube-proxy", "coredns")


def start_addons(cluster: ClusterLayout, cache_bin: Path) -> None:
    root = cluster.root
    folder = RunFolder(root)
    kubeconfig = root / "kcm.kubeconfig"
    ports = free_ports()
    for plan in (
        Plan("kube-scheduler", scheduler(cache_bin, kubeconfig), lambda: True),
        Plan("kcm-nodes", controllers(cache_bin, kubeconfig), lambda: True),
        Plan(
            "kube-proxy",
            proxy(cluster, cache_bin, ports.etcd_client, ports.etcd_peer),
            lambda: ok(f"http://127.0.0.1:{ports.etcd_client}/healthz"),
        ),
        Plan(
            "coredns",
            coredns(cluster, cache_bin, ports.apiserver),
            lambda: ok(f"http://127.0.0.1:{ports.apiserver}/ready"),
        ),
    ):
        launch(folder, plan)


def ok(url: str) -> bool:
    status, _ = probes.fetch(url)
    return status == 200


def scheduler(cache_bin: Path, kubeconfig: Path) -> list[str]:
    return [
        str(cache_bin / "kube-scheduler"),
        f"--kubeconfig={kubeconfig}",
        "--leader-elect=false",
        "--secure-port=0",
        "--profiling=false",
    ]


def controllers(cache_bin: Path, kubeconfig: Path) -> list[str]:
    return [
        str(cache_bin / "kube-controller-manager"),
        f"--kubeconfig={kubeconfig}",
        "--leader-elect=false",
        "--secure-port=0",
        f"--controllers={','.join(NODE_CONTROLLERS)}",
        "--profiling=false",
    ]


def proxy(cluster: ClusterLayout, cache_bin: Path, healthz: int, metrics: int) -> list[str]:
    """iptables mode; nothing set on the host beyond its chains (conntrack sysctls left
    alone, no localhost NodePorts so no route_localnet, OOM score untouched)."""
    config = {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(cluster.root / "kcm.kubeconfig")},
        "mode": "iptables",
        "hostnameOverride": cluster.first.name,
        "bindAddress": cluster.first.gateway,
        "healthzBindAddress": f"127.0.0.1:{healthz}",
        "metricsBindAddress": f"127.0.0.1:{metrics}",
        "oomScoreAdj": 0,
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
            "udpTimeout": "0s",
            "udpStreamTimeout": "0s",
        },
        "iptables": {"localhostNodePorts": False, "masqueradeAll": False},
        "nodePortAddresses": [str(node.subnet) for node in cluster.nodes],
    }
    path = cluster.folder / "kube-proxy.yaml"
    path.write_text(json.dumps(config, indent=1) + "\n")
    return [str(cache_bin / "kube-proxy"), f"--config={path}"]


def coredns(cluster: ClusterLayout, cache_bin: Path, ready_port: int) -> list[str]:
    """Cluster names only, on the first bridge's address (no upstream: nothing leaves)."""
    corefile = f""".:53 {{
    bind {cluster.first.gateway}
    errors
    ready 127.0.0.1:{ready_port}
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        kubeconfig {cluster.root / "kcm.kubeconfig"}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }}
    cache 5
}}
"""
    path = cluster.folder / "Corefile"
    path.write_text(corefile)
    return [str(cache_bin / "coredns"), "-conf", str(path)]

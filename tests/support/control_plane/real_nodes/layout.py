"""Where a real-node cluster keeps its files and which addresses it uses: DIR/real-nodes/ for
the cluster's own, DIR/nodes/<name>/ for each node's. Pure names, no I/O."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

COREDNS_VERSION = "v1.14.7"
PAUSE_VERSION = "3.10.2"
PAUSE_IMAGE = f"registry.k8s.io/pause:{PAUSE_VERSION}"
NODE_BINARIES = ("kubelet", "kube-scheduler", "kube-proxy")
POD_NETWORK = ipaddress.ip_network("10.245.0.0/16")  # kwok's fake pods take 10.244.0.0/16
DNS_SERVICE_IP = "10.96.0.10"  # in the control plane's service range
KUBERNETES_SERVICE_IP = "10.96.0.1"
CLUSTER_DOMAIN = "cluster.local"
BRIDGE_PREFIX = "brupopcni"  # brupopcni0, brupopcni1, ...: under the 15-byte name limit
CHAIN_PREFIX = "BRUPOP-REAL"
MAX_NODES = 8


@dataclass(frozen=True)
class NodeLayout:
    """One real node: its name, files, bridge and addresses."""

    root: Path
    index: int

    @property
    def name(self) -> str:
        return f"real-node-{self.index}"

    @property
    def folder(self) -> Path:
        return self.root / "nodes" / self.name

    @property
    def bridge(self) -> str:
        return f"{BRIDGE_PREFIX}{self.index}"

    @property
    def subnet(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(f"{POD_NETWORK.network_address + self.index * 256}/24")

    @property
    def gateway(self) -> str:
        """The bridge's own address: the node's InternalIP, its pods' default route."""
        return str(self.subnet.network_address + 1)

    @property
    def cgroup_root(self) -> str:
        """The kubelet's cgroupRoot: every pod of this node lives under it."""
        return f"/brupop-{self.name}"

    @property
    def socket(self) -> Path:
        """containerd's socket, as the node's mount namespace sees it (its private /run): a
        path under the run folder can pass the 104-byte limit of a unix socket's name."""
        return Path("/run/containerd/containerd.sock")

    @property
    def pod_logs(self) -> Path:
        """The kubelet's podLogsDir: <namespace>_<pod>_<uid>/<container>/<restart>.log."""
        return self.folder / "pod-logs"

    @property
    def host_files(self) -> Path:
        """What the node's containers see at /run/api.sock and /bin/apiclient: api.sock and
        apiclient in this folder (links in the node's mount namespace point here)."""
        return self.folder / "host"

    @property
    def holder_name(self) -> str:
        """argv[0] of the process that keeps the node's mount namespace alive."""
        return f"brupop-mntns-{self.name}"


@dataclass(frozen=True)
class ClusterLayout:
    """The real-node part of run folder DIR."""

    root: Path
    count: int

    @property
    def folder(self) -> Path:
        return self.root / "real-nodes"

    @property
    def nodes(self) -> list[NodeLayout]:
        return [NodeLayout(self.root, index) for index in range(self.count)]

    @property
    def first(self) -> NodeLayout:
        return NodeLayout(self.root, 0)

    @property
    def state(self) -> Path:
        """What `up` changed on the host and must undo (JSON), written before each change."""
        return self.folder / "host-changes.json"

    @property
    def snapshot(self) -> Path:
        """The host as `up` found it (JSON), compared by `down`."""
        return self.folder / "host-before.json"

    @property
    def values(self) -> Path:
        return self.root / "real-nodes-values.yaml"


def lock_path(cache_root: Path) -> Path:
    """One real-node cluster per machine: its holder keeps an flock on this file."""
    return cache_root / "real-nodes.lock"

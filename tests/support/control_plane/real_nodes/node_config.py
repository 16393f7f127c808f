"""The files one real node runs from: its client certificate and kubeconfig, containerd's
config (state under the node's folder; oom scores clamped, since root here may lack
CAP_SYS_RESOURCE), the CNI bridge config, the kubelet's config (cgroup v1 allowed, its own
cgroup root, cluster DNS), and the script that sets up its mount namespace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.control_plane.pki import Pki, issue, name_of, write_kubeconfig
from tests.support.control_plane.real_nodes.layout import (
    CLUSTER_DOMAIN,
    DNS_SERVICE_IP,
    PAUSE_IMAGE,
    NodeLayout,
)

CNI_PLUGINS = Path("/usr/lib/cni")
# Paths the runtimes hard-code; each node sees its own empty tmpfs there.
PRIVATE_FOLDERS = ("/run", "/var/lib/kubelet", "/var/log/containers", "/var/lib/cni")


def write_credentials(node: NodeLayout, pki: Pki, server: str) -> Path:
    """A client certificate CN=system:node:<name>, O=system:nodes (the Node authorizer's
    identity) and the kubelet's kubeconfig embedding it."""
    ca_cert = x509.load_pem_x509_certificate(pki.ca.read_bytes())
    ca_key = serialization.load_pem_private_key(pki.key("ca").read_bytes(), None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    client = f"node-{node.name}"
    node.folder.mkdir(parents=True, exist_ok=True)
    subject = name_of(f"system:node:{node.name}", "system:nodes")
    issue(pki, client, subject, ca_cert, ca_key, serving=False)
    return write_kubeconfig(node.folder / "kubelet.kubeconfig", pki, client, server)


def containerd_config(node: NodeLayout) -> str:
    folder = node.folder / "containerd"
    return f"""version = 2
root = "{folder / "root"}"
state = "{folder / "state"}"
[grpc]
  address = "{node.socket}"
[ttrpc]
  address = "{node.socket}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{folder / "opt"}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{PAUSE_IMAGE}"
  disable_apparmor = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{CNI_PLUGINS}"
    conf_dir = "{node.folder / "cni" / "net.d"}"
"""


def cni_config(node: NodeLayout) -> str:
    ipam = {
        "type": "host-local",
        "dataDir": str(node.folder / "cni" / "ipam"),
        "ranges": [[{"subnet": str(node.subnet), "gateway": node.gateway}]],
        "routes": [{"dst": "0.0.0.0/0"}],
    }
    bridge = {
        "type": "bridge",
        "bridge": node.bridge,
        "isGateway": True,
        "ipMasq": False,
        "hairpinMode": True,
        "ipam": ipam,
    }
    return json.dumps({"cniVersion": "1.0.0", "name": node.name, "plugins": [bridge]}, indent=1)


def kubelet_config(node: NodeLayout, pki: Pki, port: int, healthz_port: int) -> str:
    """JSON is YAML: the kubelet reads this as its KubeletConfiguration. Its root folder is
    the default /var/lib/kubelet, private to the node's namespace (it holds unix sockets,
    whose names a path under the run folder could make too long)."""
    config = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": "127.0.0.1",
        "port": port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": healthz_port,
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(pki.ca)},
        },
        "authorization": {"mode": "Webhook"},
        "containerRuntimeEndpoint": f"unix://{node.socket}",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": node.cgroup_root,
        "failCgroupV1": False,
        "failSwapOn": False,
        "oomScoreAdj": 0,
        "clusterDNS": [DNS_SERVICE_IP],
        "clusterDomain": CLUSTER_DOMAIN,
        "podLogsDir": str(node.pod_logs),
        "volumePluginDir": "/var/lib/kubelet/volume-plugins",
        "resolvConf": "/etc/resolv.conf",
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "1%",
            "imagefs.available": "1%",
            "nodefs.inodesFree": "1%",
        },
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "rotateCertificates": False,
        "serializeImagePulls": False,
    }
    return json.dumps(config, indent=1)


def namespace_script(node: NodeLayout) -> str:
    """Run by `unshare --mount --propagation private`: private tmpfs at the hard-coded paths,
    /run/api.sock and /bin/apiclient pointing into the node's host folder, then the holder."""
    upper, work = node.folder / "ns" / "usr-bin-upper", node.folder / "ns" / "usr-bin-work"
    lines = ["set -eu"]
    lines += [f"mount -t tmpfs -o mode=0755 brupop-{node.name} {path}" for path in PRIVATE_FOLDERS]
    lines += [
        f"ln -s {node.host_files / 'api.sock'} /run/api.sock",
        f"mount -t overlay brupop-{node.name} -o lowerdir=/usr/bin,upperdir={upper},"
        f"workdir={work} /usr/bin",
        f"exec -a {node.holder_name} sleep infinity",
    ]
    return "\n".join(lines) + "\n"


def write_node_files(node: NodeLayout, pki: Pki, ports: tuple[int, int]) -> None:
    """Everything under DIR/nodes/<name>/; the volatile parts (containerd's state, the
    overlay's work folder) fresh, as after a boot."""
    folder = node.folder
    for volatile in (folder / "containerd" / "state", folder / "ns" / "usr-bin-work"):
        shutil.rmtree(volatile, ignore_errors=True)
    for sub in ("containerd/state", "cni/net.d", "cni/ipam", "kubelet", "pod-logs", "host"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "ns" / "usr-bin-work").mkdir(parents=True, exist_ok=True)
    upper = folder / "ns" / "usr-bin-upper"
    upper.mkdir(parents=True, exist_ok=True)
    link = upper / "apiclient"
    if not link.is_symlink():
        link.symlink_to(node.host_files / "apiclient")
    (folder / "containerd" / "config.toml").write_text(containerd_config(node))
    (folder / "cni" / "net.d" / "10-brupop.conflist").write_text(cni_config(node))
    (folder / "kubelet.yaml").write_text(kubelet_config(node, pki, *ports))
    (folder / "namespace.sh").write_text(namespace_script(node))

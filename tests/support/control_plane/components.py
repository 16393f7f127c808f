"""The command line of each component: etcd, kube-apiserver, kube-controller-manager, kwok.

All listen on 127.0.0.1 only, on ports picked free at start. The reasons for each flag are in
docs/control-plane.md.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.support import ports
from tests.support.control_plane.pki import Pki
from tests.support.control_plane.versions import Cache

KWOK_NODE_SELECTOR = "kwok.x-k8s.io/node=fake"
SERVICE_RANGE = "10.96.0.0/16"
POD_RANGE = "10.244.0.1/16"
CONTROLLERS = (
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "disruption-controller",
    "root-ca-certificate-publisher-controller",
)


@dataclass(frozen=True)
class Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int
    kwok: int

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.apiserver}"

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)) + "\n")

    @classmethod
    def load(cls, path: Path) -> Ports:
        return cls(**json.loads(path.read_text()))


def free_ports() -> Ports:
    """Four different free ports for the control plane's components (`tests.support.ports`)."""
    return Ports(*ports.free_ports(4))


LISTENS = {
    "etcd": ("etcd_client", "etcd_peer"),
    "kube-apiserver": ("apiserver",),
    "kwok": ("kwok",),
}


def wait_ports_free(ports: Ports, name: str, seconds: float = 15.0) -> bool:
    """Wait until component `name`'s listening ports can be bound again (as its own start
    binds them, with SO_REUSEADDR): a killed process holds them until its last thread is gone."""
    deadline = time.monotonic() + seconds
    for field in LISTENS.get(name, ()):
        while not _bindable(getattr(ports, field)):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
    return True


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def etcd(cache: Cache, root: Path, ports: Ports) -> list[str]:
    client = f"http://127.0.0.1:{ports.etcd_client}"
    peer = f"http://127.0.0.1:{ports.etcd_peer}"
    return [
        str(cache.binary("etcd")),
        "--name=brupop",
        f"--data-dir={root / 'etcd'}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=brupop={peer}",
        "--unsafe-no-fsync",
        "--log-level=warn",
    ]


def apiserver(cache: Cache, root: Path, pki: Pki, ports: Ports) -> list[str]:
    return [
        str(cache.binary("kube-apiserver")),
        f"--etcd-servers=http://127.0.0.1:{ports.etcd_client}",
        *listen_flags(root),
        f"--secure-port={ports.apiserver}",
        f"--cert-dir={root / 'apiserver-generated'}",
        f"--tls-cert-file={pki.cert('apiserver')}",
        f"--tls-private-key-file={pki.key('apiserver')}",
        f"--client-ca-file={pki.ca}",
        f"--service-account-issuer={ports.server}",
        f"--service-account-key-file={pki.service_account_key}",
        f"--service-account-signing-key-file={pki.service_account_key}",
        f"--service-cluster-ip-range={SERVICE_RANGE}",
        "--authorization-mode=Node,RBAC",
        "--allow-privileged=true",
        "--profiling=false",
        *audit_flags(root),
    ]


def listen_flags(root: Path) -> list[str]:
    """Loopback only; with real nodes (DIR/real-nodes/apiserver-address names the first
    bridge's address) every address, advertised on the bridge so that pods reach it through
    the `kubernetes` Service (the port is closed to other interfaces by iptables)."""
    chosen = root / "real-nodes" / "apiserver-address"
    if chosen.is_file():
        address = str(ipaddress.IPv4Address(chosen.read_text().strip()))
        return [
            "--bind-address=0.0.0.0",
            f"--advertise-address={address}",
            "--endpoint-reconciler-type=lease",
        ]
    return [
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        "--endpoint-reconciler-type=none",
    ]


def audit_flags(root: Path) -> list[str]:
    """An audit log in DIR/audit/ when DIR/audit-policy.yaml exists (the real-cluster bench
    writes one to count requests per client); none otherwise."""
    policy = root / "audit-policy.yaml"
    if not policy.is_file():
        return []
    log = root / "audit" / "audit.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    return [f"--audit-policy-file={policy}", f"--audit-log-path={log}", "--audit-log-maxsize=0"]


def controller_manager(cache: Cache, root: Path, pki: Pki) -> list[str]:
    return [
        str(cache.binary("kube-controller-manager")),
        f"--kubeconfig={root / 'kcm.kubeconfig'}",
        "--leader-elect=false",
        "--secure-port=0",
        f"--controllers={','.join(CONTROLLERS)}",
        f"--root-ca-file={pki.ca}",
        f"--service-account-private-key-file={pki.service_account_key}",
        "--profiling=false",
    ]


def node_lease_seconds(root: Path) -> int:
    """The Node Leases' duration kwok renews at a quarter of: 40 s, as a kubelet's, unless
    DIR/kwok-node-lease-seconds names another (the 10,000-node bench: at 40 s, kwok's renewals
    alone are 1,000 requests a second, more than a 2-core machine serves beside brupop)."""
    chosen = root / "kwok-node-lease-seconds"
    if chosen.is_file():
        text = chosen.read_text().strip()
        if text.isdigit() and 10 <= int(text) <= 86400:
            return int(text)
    return 40


def kwok(cache: Cache, root: Path, ports: Ports) -> list[str]:
    return [
        str(cache.binary("kwok")),
        f"--kubeconfig={root / 'kwok.kubeconfig'}",
        f"--config={cache.kwok_stages}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={KWOK_NODE_SELECTOR}",
        f"--cidr={POD_RANGE}",
        "--node-ip=127.0.0.1",
        f"--node-lease-duration-seconds={node_lease_seconds(root)}",
        f"--server-address=127.0.0.1:{ports.kwok}",
    ]

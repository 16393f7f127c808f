"""What the host looks like where a real-node cluster could leave a trace: links and their
addresses, mounts, iptables chains and rules (IPv4 and IPv6), top-level cgroups, the sysctls the
runtimes touch, the folders they hard-code, and ipsets. `up` saves one; `down` compares."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.support.control_plane.real_nodes.host_changes import (
    HostCommandError,
    read_sysctl,
    run,
)

SYSCTLS = (
    "net.ipv4.ip_forward",
    "net.bridge.bridge-nf-call-iptables",
    "net.bridge.bridge-nf-call-ip6tables",
    "net.ipv4.conf.all.route_localnet",
    "net.netfilter.nf_conntrack_max",
    "net.netfilter.nf_conntrack_tcp_timeout_established",
    "net.netfilter.nf_conntrack_tcp_timeout_close_wait",
    "net.netfilter.nf_conntrack_tcp_be_liberal",
    "kernel.panic",
    "kernel.panic_on_oops",
    "vm.overcommit_memory",
    "vm.panic_on_oom",
)
FOLDERS = (
    "/run/containerd",
    "/run/netns",
    "/var/lib/kubelet",
    "/var/log/containers",
    "/var/log/pods",
    "/var/lib/cni",
    "/opt/containerd",
    "/etc/kubernetes",
    "/usr/libexec/kubernetes",
)
TABLES = ("filter", "nat", "mangle", "raw")
RUNTIME_CGROUPS = ("brupop-real-node-", "kubepods", "k8s.io", "system.slice", "kubelet", "runtime")
Snapshot = dict[str, list[str]]


def take() -> Snapshot:
    return {
        "links": links(),
        "addresses": addresses(),
        "mounts": sorted(mounts()),
        "iptables": iptables_lines(),
        "cgroups": cgroups(),
        "sysctls": [f"{name}={value}" for name in SYSCTLS if (value := sysctl_or_none(name))],
        "folders": sorted(path for path in FOLDERS if os.path.lexists(path)),
        "ipsets": ipsets(),
    }


def ipsets() -> list[str]:
    """The names of the host's ipsets (a NetworkPolicy controller's; [] without the tool)."""
    if shutil.which("ipset") is None:
        return []
    listed = subprocess.run(["ipset", "list", "-n"], capture_output=True, text=True, check=False)
    return sorted(listed.stdout.split())


def links() -> list[str]:
    return sorted(line.split(": ")[1] for line in run(["ip", "-o", "link", "show"]).splitlines())


def addresses() -> list[str]:
    lines = run(["ip", "-o", "addr", "show"]).splitlines()
    return sorted(f"{line.split()[1]} {line.split()[3]}" for line in lines)


# podman's and buildah's storage: the real nodes' containerd keeps its own root and state in the
# cluster's folder, and an image build beside a run mounts and unmounts layers here meanwhile.
OTHERS_MOUNTS = ("/var/lib/containers/storage/",)


def mounts() -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    points = (line.split()[4] for line in lines)
    return [point for point in points if not (point + "/").startswith(OTHERS_MOUNTS)]


def iptables_lines() -> list[str]:
    found = []
    for tool in ("iptables", "ip6tables"):
        for table in TABLES:
            with contextlib.suppress(HostCommandError):
                listing = run([tool, "-w", "-t", table, "-S"])
                found += [f"{tool} {table} {line}" for line in listing.splitlines()]
    return sorted(found)


def cgroups() -> list[str]:
    """Top-level cgroups a kubelet, containerd or runc could make (others' are not ours to
    judge: other programs on a shared machine make and remove theirs meanwhile)."""
    root = Path("/sys/fs/cgroup")
    found = []
    for hierarchy in sorted(root.iterdir()):
        if hierarchy.is_dir() and not hierarchy.is_symlink():
            found += [
                str(child)
                for child in hierarchy.iterdir()
                if child.is_dir() and child.name.startswith(RUNTIME_CGROUPS)
            ]
    return sorted(found)


def sysctl_or_none(name: str) -> str | None:
    try:
        return read_sysctl(name)
    except OSError:
        return None


def save(snapshot: Snapshot, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(snapshot, indent=1) + "\n")


def load(path: Path) -> Snapshot:
    loaded: Snapshot = json.loads(path.read_text())
    return loaded


def differences(before: Snapshot, after: Snapshot) -> list[str]:
    """One line per thing added or gone, by kind: empty when the host is as before."""
    lines = []
    for kind in sorted(set(before) | set(after)):
        old, new = set(before.get(kind, [])), set(after.get(kind, []))
        lines += [f"{kind}: added {item}" for item in sorted(new - old)]
        lines += [f"{kind}: gone {item}" for item in sorted(old - new)]
    return lines

"""`up DIR --real-nodes N` and `down DIR`: the control plane with N real nodes, kube-proxy,
CoreDNS and the node controllers, one such cluster per machine, every host change written down
first and undone by `down`, which then compares the host with what `up` found."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from tests.support.control_plane import lifecycle
from tests.support.control_plane.components import Ports
from tests.support.control_plane.pki import Pki
from tests.support.control_plane.processes import RunFolder, stop
from tests.support.control_plane.real_nodes import (
    build,
    host_snapshot,
    machine_lock,
    network,
    network_policy,
    readiness,
)
from tests.support.control_plane.real_nodes.addons import start_addons
from tests.support.control_plane.real_nodes.host_changes import (
    HostCommandError,
    Journal,
    make_folder,
    set_sysctl,
)
from tests.support.control_plane.real_nodes.images import image_archives, write_values
from tests.support.control_plane.real_nodes.layout import (
    MAX_NODES,
    ClusterLayout,
    NodeLayout,
    lock_path,
)
from tests.support.control_plane.real_nodes.node import start_node
from tests.support.control_plane.real_nodes.node_config import PRIVATE_FOLDERS, write_credentials
from tests.support.control_plane.real_nodes.node_processes import NodeStartError, stop_node
from tests.support.control_plane.versions import Cache

TOOLS = ("containerd", "runc", "ctr", "iptables", "ipset", "ip", "unshare", "nsenter")


class UpFailure(Exception):
    """`up` cannot go on; the message is one line (or a line and a log's end)."""


def say(line: str, problem: bool = False) -> None:
    print(f"control-plane: {line}", file=sys.stderr if problem else sys.stdout, flush=True)


def cannot_host(cache: Cache, count: int) -> str:
    """Why this machine cannot run the real nodes, or "" when it can."""
    if not 1 <= count <= MAX_NODES:
        return f"--real-nodes takes 1 to {MAX_NODES} nodes, not {count}"
    missing = cache.missing() + build.missing(cache)
    if missing:
        return f"{', '.join(missing)} not built: run `scripts/control-plane build --real-nodes`"
    absent = [tool for tool in TOOLS if shutil.which(tool) is None]
    if absent or not Path("/usr/lib/cni/bridge").exists():
        return f"{', '.join(absent) or 'the CNI plugins'} missing: run scripts/install-node-runtime"
    if (
        not Path("/sys/fs/cgroup/memory").is_dir()
        and not Path("/sys/fs/cgroup/cgroup.controllers").exists()
    ):
        return "this kernel has no memory cgroup, which a kubelet needs"
    return ""


def up(root: Path, cache: Cache, count: int) -> int:
    began = time.monotonic()
    why = cannot_host(cache, count)
    if why:
        say(why, True)
        return 2
    cluster = ClusterLayout(root, count)
    records = RunFolder(cluster.folder)
    try:
        machine_lock.acquire(lock_path(cache.root), root, records)
    except machine_lock.MachineBusy as busy:
        say(
            f"a cluster with real nodes already runs on this machine (in {busy}); stop it "
            f"first with `scripts/control-plane down {busy}`",
            True,
        )
        return 1
    try:
        start_everything(cluster, cache, began)
    except (UpFailure, NodeStartError, HostCommandError, lifecycle.StartFailure) as failure:
        say(str(failure), True)
        down(root, cache, quiet=True)
        return 1
    except Exception as failure:
        say(f"up --real-nodes failed: {type(failure).__name__}: {failure}", True)
        down(root, cache, quiet=True)
        return 1
    say(
        f"{count} real nodes ready in {time.monotonic() - began:.1f} s; "
        f"KUBECONFIG={root}/kubeconfig; chart values: {cluster.values}"
    )
    return 0


def start_everything(cluster: ClusterLayout, cache: Cache, began: float) -> None:
    host_snapshot.save(host_snapshot.take(), cluster.snapshot)
    journal = Journal(cluster.state)
    for name in host_snapshot.SYSCTLS:
        value = host_snapshot.sysctl_or_none(name)
        if value is not None:
            set_sysctl(journal, name, value)
    for folder in PRIVATE_FOLDERS:
        make_folder(journal, Path(folder))
    network.setup_bridges(cluster, journal)
    (cluster.folder / "apiserver-address").write_text(cluster.first.gateway + "\n")
    if lifecycle.up(cluster.root, cache) != 0:
        raise UpFailure("the control plane did not start (see above)")
    ports = Ports.load(cluster.root / "ports.json")
    network.guard_apiserver(journal, ports.apiserver)
    step(began, "control plane up, pod network ready")
    readiness.create_dns_service(cluster)
    pki = Pki(cluster.root / "pki")
    archives = [build.pause_archive(cache), *image_archives()]
    if len(archives) == 1:
        say("no brupop images in dist/images to import: run `ARCHES=amd64 scripts/build-images`")
    for node in cluster.nodes:
        write_credentials(node, pki, ports.server)
        start_node(node, pki, cache.bin, archives)
        step(began, f"{node.name}: containerd and kubelet up, {len(archives)} images imported")
    start_addons(cluster, cache.bin)
    readiness.wait_nodes_ready(cluster)
    step(began, "nodes Ready and schedulable")
    readiness.start_cert_manager(cluster, cache)
    write_values(cluster)


def step(began: float, what: str) -> None:
    say(f"[{time.monotonic() - began:5.1f} s] {what}")


def node_layouts(root: Path) -> list[NodeLayout]:
    folders = sorted((root / "nodes").glob("real-node-*"))
    return [NodeLayout(root, int(folder.name.rsplit("-", 1)[1])) for folder in folders]


def stop_added(root: Path, quiet: bool) -> None:
    """The processes started beside the control plane (kube-proxy, CoreDNS, the scheduler,
    cert-manager...), before the API server they talk to."""
    folder = RunFolder(root)
    for record in folder.all_records():
        if record.name not in lifecycle.ORDER:
            outcome = stop(folder, record)
            if not quiet:
                say(outcome)


def down(root: Path, cache: Cache, quiet: bool = False) -> int:
    """Stop the nodes, the cluster's processes and the control plane; undo the host changes;
    say whether the host is as `up` found it. Safe to repeat; a control plane alone as before."""
    cluster = ClusterLayout(root, 0)
    if not cluster.folder.is_dir():
        return lifecycle.down(root, cache, quiet)
    for node in node_layouts(root):
        for line in stop_node(node, grace_seconds=5.0):
            if not quiet:
                say(line)
    readiness.stop_cert_manager(cluster)
    stop_added(root, quiet)
    lifecycle.down(root, cache, quiet)
    network.remove_new_chains(cluster, cache.bin)
    if cluster.snapshot.is_file():
        network_policy.remove_new_ipsets(host_snapshot.load(cluster.snapshot).get("ipsets", []))
    journal = Journal(cluster.state)
    for entry in reversed(journal.entries()):
        network.undo(entry)
    journal.forget()
    (cluster.folder / "apiserver-address").unlink(missing_ok=True)
    if cluster.snapshot.is_file():
        left = host_snapshot.differences(host_snapshot.load(cluster.snapshot), host_snapshot.take())
        for line in left:
            say(f"host not as before: {line}", True)
        if not left and not quiet:
            say("the host is as before `up`")
    machine_lock.release(RunFolder(cluster.folder))
    return 0

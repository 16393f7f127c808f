"""Starting and stopping one real node's processes: the holder of its mount namespace, then
containerd and the kubelet inside that namespace (nsenter, which execs, so the recorded argv
is the runtime's own); stopped by recorded pid, the pods' processes found by the node's cgroup
root and the shims by the node's mount namespace."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from tests.support.control_plane.processes import (
    Record,
    RunFolder,
    is_ours,
    log_tail,
    reap,
    stop,
)
from tests.support.control_plane.real_nodes.layout import NodeLayout

CGROUP_ROOT = Path("/sys/fs/cgroup")
READY_SECONDS = 60.0
EXIT_RECORD_SECONDS = 10.0
# A node's pods weigh as much as this many busy processes of the machine (cgroup v1 cpu.shares).
NODE_CPU_WEIGHT = 8


class NodeStartError(Exception):
    """A node's process exited or was not ready in time; the message ends with its log."""


def node_folder(node: NodeLayout) -> RunFolder:
    return RunFolder(node.folder)


def start_in_namespace(node: NodeLayout, name: str, argv: list[str], holder: int) -> int:
    """Start `argv` in the node's mount namespace, detached, its output in the node's logs."""
    folder = node_folder(node)
    folder.logs.mkdir(parents=True, exist_ok=True)
    folder.records.mkdir(parents=True, exist_ok=True)
    prefix = ["nsenter", f"--mount=/proc/{holder}/ns/mnt", "--"] if holder else []
    with folder.log(name).open("ab") as log:
        process = subprocess.Popen(
            [*prefix, *argv],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=node.folder,
        )
    folder.record_path(name).write_text(json.dumps({"pid": process.pid, "argv": argv}) + "\n")
    return process.pid


def start_holder(node: NodeLayout) -> int:
    """The namespace's keeper: it mounts the private folders, then sleeps as `holder_name`."""
    script = str(node.folder / "namespace.sh")
    argv = ["unshare", "--mount", "--propagation", "private", "--", "bash", script]
    pid = start_in_namespace(node, "mntns", argv, 0)
    record = Record("mntns", pid, [node.holder_name, "infinity"])
    node_folder(node).record_path("mntns").write_text(
        json.dumps({"pid": pid, "argv": record.argv}) + "\n"
    )
    wait_for(node, "mntns", lambda: is_ours(record))
    return pid


def wait_for(node: NodeLayout, name: str, ready: object, seconds: float = READY_SECONDS) -> None:
    """Poll `ready()` until true; fail at once if the recorded process is gone."""
    assert callable(ready)
    folder = node_folder(node)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        record = folder.read(name)
        pid = record.pid if record else 0
        reap(pid)
        if pid and not Path(f"/proc/{pid}").exists():
            raise NodeStartError(f"{node.name}: {name} exited:\n{log_tail(folder.log(name))}")
        time.sleep(0.2)
    raise NodeStartError(f"{node.name}: {name} not ready after {seconds:.0f} s")


def holder_pid(node: NodeLayout) -> int:
    record = node_folder(node).read("mntns")
    return record.pid if record and is_ours(record) else 0


def namespace_of(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return ""


def pids_in_namespace(namespace: str) -> list[int]:
    if not namespace:
        return []
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and namespace_of(int(entry.name)) == namespace:
            found.append(int(entry.name))
    return found


def cgroup_folders(node: NodeLayout) -> list[Path]:
    """The node's cgroup root in every hierarchy that has it."""
    return [
        hierarchy / node.cgroup_root.lstrip("/")
        for hierarchy in sorted(CGROUP_ROOT.iterdir())
        if (hierarchy / node.cgroup_root.lstrip("/")).is_dir()
    ]


def pod_pids(node: NodeLayout) -> set[int]:
    """Every process in the node's cgroup tree: its pods' containers."""
    pids: set[int] = set()
    for folder in cgroup_folders(node):
        for current, _, _ in os.walk(folder):
            try:
                pids.update(int(line) for line in Path(current, "cgroup.procs").read_text().split())
            except OSError:
                continue
    return pids


def signal_all(pids: set[int], number: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            continue


def wait_empty(node: NodeLayout, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while pod_pids(node):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def stop_pods(node: NodeLayout, grace_seconds: float) -> None:
    """What a shutdown does to the node's containers: SIGTERM, then SIGKILL after the grace;
    then containerd is given the time to record each exit (its status, exit code included,
    is what the kubelet reports after the boot)."""
    signal_all(pod_pids(node), signal.SIGTERM)
    if not wait_empty(node, grace_seconds):
        signal_all(pod_pids(node), signal.SIGKILL)
        wait_empty(node, 10.0)
    deadline = time.monotonic() + EXIT_RECORD_SECONDS
    while unrecorded_exits(node) and time.monotonic() < deadline:
        time.sleep(0.1)


def unrecorded_exits(node: NodeLayout) -> list[Path]:
    """Status files of containers containerd still thinks are running (no finish time)."""
    folder = node.folder / "containerd" / "root" / "io.containerd.grpc.v1.cri" / "containers"
    running = []
    for status in folder.glob("*/status"):
        try:
            if '"FinishedAt":0' in status.read_text().replace(" ", ""):
                running.append(status)
        except OSError:
            continue
    return running


def stop_node(node: NodeLayout, grace_seconds: float = 30.0) -> list[str]:
    """Stop the kubelet, the pods, containerd, the shims and the namespace holder; then
    remove the node's cgroups. Safe to repeat. One line per thing stopped."""
    folder = node_folder(node)
    said = []
    namespace = namespace_of(holder_pid(node))
    record = folder.read("kubelet")
    if record:
        said.append(stop(folder, record))
    stop_pods(node, grace_seconds)
    record = folder.read("containerd")
    if record:
        said.append(stop(folder, record))
    leftovers = [pid for pid in pids_in_namespace(namespace) if pid != holder_pid(node)]
    signal_all(set(leftovers), signal.SIGKILL)
    record = folder.read("mntns")
    if record:
        said.append(stop(folder, record))
    remove_cgroups(node)
    return [f"{node.name}: {line}" for line in said]


def remove_cgroups(node: NodeLayout) -> None:
    for folder in cgroup_folders(node):
        for current, _, _ in os.walk(folder, topdown=False):
            try:
                os.rmdir(current)
            except OSError:
                continue


def make_cgroups(node: NodeLayout) -> None:
    """The kubelet wants its cgroupRoot to exist in every v1 hierarchy. The node's CPU weight
    is that of NODE_CPU_WEIGHT busy processes: a node is a machine of its own, and its pods
    should not fight every other process on this one for a single process's share."""
    for hierarchy in sorted(CGROUP_ROOT.iterdir()):
        if (hierarchy / "cgroup.procs").exists():
            folder = hierarchy / node.cgroup_root.lstrip("/")
            folder.mkdir(exist_ok=True)
            if (folder / "cpu.shares").exists():
                (folder / "cpu.shares").write_text(f"{1024 * NODE_CPU_WEIGHT}\n")


def binary(name: str, cache_bin: Path | None = None) -> str:
    if cache_bin is not None:
        return str(cache_bin / name)
    found = shutil.which(name)
    if found is None:
        raise NodeStartError(f"{name} is not installed: run scripts/install-node-runtime")
    return found

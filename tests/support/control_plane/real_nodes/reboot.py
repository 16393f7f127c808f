"""A real node's reboot, as the host emulator asks for it when an agent reboots its host:
the kubelet stops, every container of the node gets SIGTERM and, after the grace period,
SIGKILL; containerd, its shims and the node's mount namespace go; then they all start again
(containerd's state and the node's private folders fresh, its images kept) and the kubelet
restarts the node's pods."""

from __future__ import annotations

import time
from pathlib import Path

from tests.support.control_plane.pki import Pki
from tests.support.control_plane.real_nodes.layout import NodeLayout
from tests.support.control_plane.real_nodes.node import start_node
from tests.support.control_plane.real_nodes.node_processes import NodeStartError, stop_node
from tests.support.control_plane.versions import Cache


def find_node(root: Path, name: str) -> NodeLayout:
    prefix = "real-node-"
    if not name.startswith(prefix) or not name[len(prefix) :].isdigit():
        raise NodeStartError(f"no real node named {name!r} (names are {prefix}0, {prefix}1, ...)")
    node = NodeLayout(root, int(name[len(prefix) :]))
    if not (node.folder / "kubelet.yaml").is_file():
        raise NodeStartError(f"{name} is not a real node of {root}")
    return node


def reboot_node(root: Path, cache: Cache, name: str, grace_seconds: float = 30.0) -> float:
    """Reboot node `name` of run folder `root`; the seconds it took (down and up)."""
    node = find_node(root, name)
    began = time.monotonic()
    stop_node(node, grace_seconds)
    start_node(node, Pki(root / "pki"), cache.bin, [])
    return time.monotonic() - began


def reboot_command(root: Path, cache: Cache, name: str, grace_seconds: float) -> int:
    """`scripts/control-plane reboot DIR NODE [--grace S]`: one line either way."""
    try:
        seconds = reboot_node(root, cache, name, grace_seconds)
    except NodeStartError as failure:
        print(f"control-plane: reboot of {name}: {failure}", flush=True)
        return 1
    print(f"control-plane: {name} rebooted in {seconds:.1f} s", flush=True)
    return 0

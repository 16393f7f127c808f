"""A NetworkPolicy controller for one real node: kube-router's firewall alone (its router and
service proxy off), built from the Go module proxy into the cache. The nodes share this
machine's network namespace and kube-router deletes every pod chain it did not make, so one
instance enforces the policies of one node's pods only (a second, for the other node, deletes the
first one's chains). `down` stops it with the cluster's other recorded processes and removes its
chains with theirs, and its ipsets (`remove_new_ipsets`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.control_plane import build as control_plane_build
from tests.support.control_plane import lifecycle, probes
from tests.support.control_plane.build_lock import build_lock
from tests.support.control_plane.components import free_ports
from tests.support.control_plane.gotool import Go, Progress
from tests.support.control_plane.lifecycle import Plan
from tests.support.control_plane.processes import RunFolder, outlive, start
from tests.support.control_plane.real_nodes.host_snapshot import ipsets
from tests.support.control_plane.versions import Cache

KUBE_ROUTER = "github.com/cloudnativelabs/kube-router/v2"
KUBE_ROUTER_VERSION = "v2.1.0"
NAME = "kube-router"
READY_SECONDS = 240.0  # its first sync lists every pod, namespace and policy: slow at load 20


def build_kube_router(cache: Cache, go: Go | None = None) -> Path:
    """kube-router into the cache, once (under the cache's build lock)."""
    go = go or Go(cache.home / "build.log")
    progress = Progress()
    with build_lock(cache.lock):
        if not control_plane_build.is_built(cache, NAME, progress):
            folder = control_plane_build.throwaway_module(cache, NAME)
            with progress.step(f"kube-router {KUBE_ROUTER_VERSION}: module resolved"):
                go.run(folder, "get", f"{KUBE_ROUTER}@{KUBE_ROUTER_VERSION}")
            with progress.step(f"kube-router {KUBE_ROUTER_VERSION}: built"):
                package = f"{KUBE_ROUTER}/cmd/kube-router"
                control_plane_build.go_build(go, folder, package, cache.binary(NAME), "-s -w")
    return cache.binary(NAME)


def enforce_on(root: Path, cache: Cache, node: str) -> None:
    """Start kube-router's firewall for `node`'s pods, recorded in DIR/run; ready once healthy."""
    port = free_ports().etcd_client
    argv = [
        str(build_kube_router(cache)),
        "--run-firewall=true",
        "--run-router=false",
        "--run-service-proxy=false",
        "--enable-cni=false",
        f"--kubeconfig={root / 'kubeconfig'}",
        f"--hostname-override={node}",
        f"--health-port={port}",
        "--metrics-port=0",
    ]
    lifecycle.READY_SECONDS.setdefault(NAME, READY_SECONDS)
    folder = RunFolder(root)
    process = outlive(start(folder, NAME, argv))
    lifecycle.wait_ready(folder, Plan(NAME, argv, lambda: probes.healthz_answers(port)), process)


def remove_new_ipsets(before: list[str]) -> None:
    """Destroy the ipsets made since `before` (after the iptables rules that used them)."""
    for name in sorted(set(ipsets()) - set(before)):
        subprocess.run(["ipset", "destroy", name], capture_output=True, check=False)

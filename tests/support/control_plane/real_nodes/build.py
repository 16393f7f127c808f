"""`build --real-nodes`: kubelet, kube-scheduler and kube-proxy from the control plane's own
Kubernetes module (same version and stamps), CoreDNS and kube-router (the NetworkPolicy
controller) from the Go module proxy, and the pause image from the release's pause.c, into the
same version-keyed cache, under its lock."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.support.control_plane import build as control_plane_build
from tests.support.control_plane import cert_manager_build
from tests.support.control_plane.build_lock import build_lock
from tests.support.control_plane.gotool import BuildError, Go, Progress
from tests.support.control_plane.real_nodes import network_policy
from tests.support.control_plane.real_nodes.layout import (
    COREDNS_VERSION,
    NODE_BINARIES,
    PAUSE_IMAGE,
    PAUSE_VERSION,
)
from tests.support.control_plane.real_nodes.oci_archive import ImageSpec, write_archive
from tests.support.control_plane.versions import Cache

COREDNS_MAIN = "github.com/coredns/coredns"
PAUSE_SOURCE = "build/pause/linux/pause.c"


def pause_archive(cache: Cache) -> Path:
    return cache.home / "images" / f"pause-{PAUSE_VERSION}.oci.tar"


def missing(cache: Cache) -> list[str]:
    """What `build --real-nodes` has not made yet."""
    names = [*NODE_BINARIES, "coredns", network_policy.NAME]
    absent = [name for name in names if not os.access(cache.binary(name), os.X_OK)]
    if not pause_archive(cache).is_file():
        absent.append(pause_archive(cache).name)
    return absent


def build_real_nodes(cache: Cache, go: Go | None = None) -> None:
    """The control plane first (a no-op when cached), then what real nodes add."""
    control_plane_build.build_all(cache, go)
    go = go or Go(cache.home / "build.log")
    progress = Progress()
    with build_lock(cache.lock):
        build_node_binaries(cache, go, progress)
        build_coredns(cache, go, progress)
        build_pause(cache, go, progress)
    network_policy.build_kube_router(cache, go)
    cert_manager_build.build_cert_manager(cert_manager_build.CertManagerCache(cache.root))
    print(f"control-plane build: real-node parts done in {progress.elapsed():.0f} s", flush=True)


def build_node_binaries(cache: Cache, go: Go, progress: Progress) -> None:
    folder = cache.module("kubernetes")
    version = cache.versions.kubernetes
    for name in NODE_BINARIES:
        if control_plane_build.is_built(cache, name, progress):
            continue
        with progress.step(f"{name} {version}: built"):
            control_plane_build.go_build(
                go,
                folder,
                f"{control_plane_build.KUBERNETES}/cmd/{name}",
                cache.binary(name),
                control_plane_build.kubernetes_ldflags(cache.versions),
            )


def build_coredns(cache: Cache, go: Go, progress: Progress) -> None:
    if control_plane_build.is_built(cache, "coredns", progress):
        return
    folder = control_plane_build.throwaway_module(cache, "coredns")
    with progress.step(f"coredns {COREDNS_VERSION}: module resolved"):
        go.run(folder, "get", f"{COREDNS_MAIN}@{COREDNS_VERSION}")
    with progress.step(f"coredns {COREDNS_VERSION}: built"):
        control_plane_build.go_build(go, folder, COREDNS_MAIN, cache.binary("coredns"), "-s -w")


def build_pause(cache: Cache, go: Go, progress: Progress) -> None:
    """gcc -static of the release's pause.c, packed as the sandbox image containerd expects."""
    target = pause_archive(cache)
    if target.is_file():
        return
    if shutil.which("gcc") is None:
        raise BuildError("gcc is missing (the pause image is built from pause.c): install gcc")
    source = Path(
        go.module_info(cache.home, f"{control_plane_build.KUBERNETES}@{cache.versions.kubernetes}")[
            "Dir"
        ]
    )
    work = target.parent / "pause-build"
    work.mkdir(parents=True, exist_ok=True)
    binary = work / "pause"
    with progress.step(f"pause {PAUSE_VERSION}: built from {PAUSE_SOURCE}, archived"):
        compiled = subprocess.run(
            [
                "gcc",
                "-Os",
                "-static",
                f"-DVERSION=v{PAUSE_VERSION}",
                "-o",
                str(binary),
                str(source / PAUSE_SOURCE),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if compiled.returncode != 0:
            raise BuildError(f"gcc of pause.c failed: {compiled.stderr.strip()[-300:]}")
        subprocess.run(["strip", str(binary)], check=False, capture_output=True)
        spec = ImageSpec(PAUSE_IMAGE, {"/pause": binary}, ["/pause"], "65535:65535")
        write_archive(spec, target)

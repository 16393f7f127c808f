"""`build`: etcd, kube-apiserver, kube-controller-manager and kwok from the Go module proxy,
into the version-keyed cache, one build at a time. A binary already there is skipped."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.support.control_plane.build_lock import build_lock
from tests.support.control_plane.estimate import estimate_line, machine
from tests.support.control_plane.gotool import BuildError, Go, Progress
from tests.support.control_plane.kwok_stages import write_stages
from tests.support.control_plane.versions import Cache, Versions

ETCD_MAIN = "go.etcd.io/etcd/server/v3"
KUBERNETES = "k8s.io/kubernetes"
KUBERNETES_COMMANDS = ("kube-apiserver", "kube-controller-manager")
KWOK_MODULE = "sigs.k8s.io/kwok"
KWOK_MAIN = f"{KWOK_MODULE}/cmd/kwok"
STAGING_PREFIX = "./staging/src/"


def build_all(cache: Cache, go: Go | None = None) -> None:
    """Build whatever is missing, holding the cache's lock; one line per step."""
    go = go or Go(cache.home / "build.log")
    progress = Progress()
    print(f"control-plane build: {cache.versions.key} into {cache.bin}", flush=True)
    with build_lock(cache.lock):
        line = estimate_line(cache.missing(), *machine())
        if line:
            print(line, flush=True)
        build_etcd(cache, go, progress)
        build_kwok(cache, go, progress)
        build_kubernetes(cache, go, progress)
    print(f"control-plane build: done in {progress.elapsed():.0f} s", flush=True)


def build_etcd(cache: Cache, go: Go, progress: Progress) -> None:
    version = cache.versions.etcd
    if is_built(cache, "etcd", progress):
        return
    folder = throwaway_module(cache, "etcd")
    with progress.step(f"etcd {version}: module resolved"):
        go.run(folder, "get", f"{ETCD_MAIN}@{version}")
    with progress.step(f"etcd {version}: built"):
        go_build(go, folder, ETCD_MAIN, cache.binary("etcd"), "-s -w")


def build_kwok(cache: Cache, go: Go, progress: Progress) -> None:
    version = cache.versions.kwok
    if not is_built(cache, "kwok", progress):
        folder = throwaway_module(cache, "kwok")
        with progress.step(f"kwok {version}: module resolved"):
            go.run(folder, "get", f"{KWOK_MAIN}@{version}")
        with progress.step(f"kwok {version}: built"):
            go_build(go, folder, KWOK_MAIN, cache.binary("kwok"), "-s -w")
    if cache.kwok_stages.exists():
        return
    with progress.step(f"kwok {version}: stages collected into {cache.kwok_stages.name}"):
        source = Path(go.module_info(cache.home, f"{KWOK_MODULE}@{version}")["Dir"])
        write_stages(source, cache.kwok_stages)


def build_kubernetes(cache: Cache, go: Go, progress: Progress) -> None:
    versions = cache.versions
    wanted = [name for name in KUBERNETES_COMMANDS if not is_built(cache, name, progress)]
    if not wanted:
        return
    folder = cache.module("kubernetes")
    folder.mkdir(parents=True, exist_ok=True)
    with progress.step(f"kubernetes {versions.kubernetes}: source downloaded, go.mod generated"):
        (folder / "go.mod").write_text(kubernetes_gomod(go, folder.parent, versions))
    packages = [f"{KUBERNETES}/cmd/{name}@{versions.kubernetes}" for name in wanted]
    with progress.step(f"kubernetes {versions.kubernetes}: dependencies resolved"):
        go.run(folder, "get", *packages)
    for name in wanted:
        with progress.step(f"{name} {versions.kubernetes}: built"):
            package = f"{KUBERNETES}/cmd/{name}"
            go_build(go, folder, package, cache.binary(name), kubernetes_ldflags(versions))


def is_built(cache: Cache, name: str, progress: Progress) -> bool:
    if os.access(cache.binary(name), os.X_OK):
        with progress.step(f"{name}: already in the cache, skipped"):
            return True
    return False


def throwaway_module(cache: Cache, name: str) -> Path:
    """A fresh main module whose only job is to pin `name`'s dependencies."""
    folder = cache.module(name)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "go.mod").write_text(f"module local/{name}bin\n\ngo 1.26.0\n")
    (folder / "go.sum").unlink(missing_ok=True)
    return folder


def go_build(go: Go, folder: Path, package: str, target: Path, ldflags: str) -> None:
    """Build into a temporary name first, so an interrupted build leaves nothing cached."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    go.run(
        folder, "build", "-mod=mod", "-trimpath", "-ldflags", ldflags, "-o", str(partial), package
    )
    os.replace(partial, target)


def kubernetes_ldflags(versions: Versions) -> str:
    """What `make` would stamp, so `--version` prints the release instead of v0.0.0-master."""
    minor = versions.kubernetes.split(".")[1]
    stamps = {
        "gitVersion": versions.kubernetes,
        "gitMajor": "1",
        "gitMinor": minor,
        "gitTreeState": "clean",
    }
    flags = ["-s", "-w"]
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [f"-X {package}.{name}={value}" for name, value in stamps.items()]
    return " ".join(flags)


def kubernetes_gomod(go: Go, cwd: Path, versions: Versions) -> str:
    """A go.mod requiring k8s.io/kubernetes, with its staging replacements turned into
    published versions: generated from the release's own go.mod, not hard-coded."""
    info = go.module_info(cwd, f"{KUBERNETES}@{versions.kubernetes}")
    upstream = go.edit_json(cwd, Path(info["GoMod"]))
    lines = [
        "module local/kubernetesbin",
        "",
        f"go {upstream['Go']}",
        "",
        *[f"godebug {entry['Key']}={entry['Value']}" for entry in upstream.get("GoDebug") or []],
        "",
        f"require {KUBERNETES} {versions.kubernetes}",
        "",
        "replace (",
        *[f"\t{replacement(entry, versions)}" for entry in upstream.get("Replace") or []],
        ")",
    ]
    return "\n".join(lines) + "\n"


def replacement(entry: dict[str, Any], versions: Versions) -> str:
    """One replace line: a staging folder becomes the module at v0.Y.Z."""
    old, new = entry["Old"]["Path"], entry["New"]
    if new["Path"].startswith(STAGING_PREFIX):
        return f"{old} => {old} {versions.staging}"
    if new.get("Version"):
        return f"{old} => {new['Path']} {new['Version']}"
    raise BuildError(f"{KUBERNETES} replaces {old} with a local folder {new['Path']}")

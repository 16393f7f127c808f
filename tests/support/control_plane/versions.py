"""The pinned versions and where their binaries are cached, outside the repository."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok")


@dataclass(frozen=True)
class Versions:
    """One pinned release of each component."""

    etcd: str = "v3.6.16"
    kubernetes: str = "v1.37.2"
    kwok: str = "v0.8.0"

    @property
    def key(self) -> str:
        """The cache folder name: every version, so a bump never reuses an old binary."""
        return f"etcd-{self.etcd}_kubernetes-{self.kubernetes}_kwok-{self.kwok}"

    @property
    def staging(self) -> str:
        """The staging modules' version for this Kubernetes release: v1.Y.Z -> v0.Y.Z."""
        return "v0." + self.kubernetes.removeprefix("v1.")


def cache_root() -> Path:
    """$BRUPOP_CONTROL_PLANE_CACHE, else ~/.cache/brupop-control-plane."""
    configured = os.environ.get("BRUPOP_CONTROL_PLANE_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "brupop-control-plane"


@dataclass(frozen=True)
class Cache:
    """The folders of one version set in the cache."""

    root: Path
    versions: Versions

    @property
    def home(self) -> Path:
        return self.root / self.versions.key

    @property
    def bin(self) -> Path:
        return self.home / "bin"

    @property
    def lock(self) -> Path:
        """Held by a build, so that two builds never write the same files."""
        return self.home / "build.lock"

    def binary(self, name: str) -> Path:
        return self.bin / name

    @property
    def kwok_stages(self) -> Path:
        """kwok's stage definitions, taken from its module source at build time."""
        return self.home / "kwok-stages.yaml"

    def module(self, name: str) -> Path:
        """The throwaway Go module that builds `name`."""
        return self.home / "modules" / name

    def missing(self) -> list[str]:
        """What `build` has not made yet: binaries, and kwok's stages."""
        missing = [name for name in BINARIES if not os.access(self.binary(name), os.X_OK)]
        if not self.kwok_stages.exists():
            missing.append(self.kwok_stages.name)
        return missing


def default_cache() -> Cache:
    return Cache(cache_root(), Versions())

"""cert-manager's controller, cainjector and webhook built from its module on the Go proxy.

cert-manager publishes its library module (github.com/cert-manager/cert-manager) on the proxy,
but not the small `cmd/*` modules that hold its `main` packages. So the three commands are
built from short `main` packages of our own (cert_manager_go/), placed in a throwaway module
under cert-manager's module path: Go lets only that path import the library's `internal`
packages, which the webhook needs. The CRDs come from the same module's deploy/crds.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.support.control_plane.build_lock import build_lock
from tests.support.control_plane.go_errors import BuildError
from tests.support.control_plane.gotool import Go, Progress

VERSION = "v1.21.2"
MODULE = "github.com/cert-manager/cert-manager"
LOCAL_MODULE = f"{MODULE}/brupophost"  # under cert-manager's path: its internal/ is importable
COMMANDS = ("controller", "cainjector", "webhook")
SOURCES = Path(__file__).resolve().parent / "cert_manager_go"
TEMPLATE_MARK = "{{"


@dataclass(frozen=True)
class CertManagerCache:
    """The folders of one cert-manager version in the control-plane cache."""

    root: Path
    version: str = VERSION

    @property
    def home(self) -> Path:
        return self.root / f"cert-manager-{self.version}"

    @property
    def lock(self) -> Path:
        return self.home / "build.lock"

    @property
    def module(self) -> Path:
        return self.home / "module"

    @property
    def crds(self) -> Path:
        """Every CRD of the release in one multi-document YAML file."""
        return self.home / "crds.yaml"

    def binary(self, name: str) -> Path:
        return self.home / "bin" / f"cert-manager-{name}"

    def missing(self) -> list[str]:
        missing = [
            self.binary(name).name for name in COMMANDS if not os.access(self.binary(name), os.X_OK)
        ]
        if not self.crds.is_file():
            missing.append(self.crds.name)
        return missing


def build_cert_manager(cache: CertManagerCache, go: Go | None = None) -> None:
    """Build whatever is missing, holding the version's lock; one line per step."""
    go = go or Go(cache.home / "build.log")
    progress = Progress()
    with build_lock(cache.lock):
        if not cache.missing():
            with progress.step(f"cert-manager {cache.version}: already in the cache, skipped"):
                return
        prepare_module(cache, go, progress)
        for name in COMMANDS:
            if os.access(cache.binary(name), os.X_OK):
                continue
            with progress.step(f"cert-manager-{name} {cache.version}: built"):
                build_command(cache, go, name)
        if not cache.crds.is_file():
            with progress.step(f"cert-manager {cache.version}: CRDs collected"):
                collect_crds(cache, go)


def prepare_module(cache: CertManagerCache, go: Go, progress: Progress) -> None:
    """A fresh module holding our mains, requiring the pinned release, dependencies tidied."""
    shutil.rmtree(cache.module, ignore_errors=True)
    cache.module.mkdir(parents=True)
    for name in COMMANDS:
        shutil.copytree(SOURCES / name, cache.module / name)
    (cache.module / "go.mod").write_text(f"module {LOCAL_MODULE}\n\ngo 1.26.0\n")
    with progress.step(f"cert-manager {cache.version}: module resolved"):
        go.run(cache.module, "get", f"{MODULE}@{cache.version}")
        go.run(cache.module, "mod", "tidy")


def build_command(cache: CertManagerCache, go: Go, name: str) -> None:
    """One static binary, written under a temporary name first."""
    target = cache.binary(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    go.run(cache.module, "build", "-trimpath", "-ldflags", "-s -w", "-o", str(partial), f"./{name}")
    os.replace(partial, target)


def collect_crds(cache: CertManagerCache, go: Go) -> None:
    """The release's deploy/crds/*.yaml joined into one file; a templated one is refused."""
    source = Path(go.module_info(cache.home, f"{MODULE}@{cache.version}")["Dir"]) / "deploy/crds"
    documents = []
    for path in sorted(source.glob("*.yaml")):
        text = path.read_text()
        if TEMPLATE_MARK in text:
            raise BuildError(f"{path.name} of cert-manager {cache.version} is a template")
        documents.append(text.strip().removeprefix("---").strip())
    if not documents:
        raise BuildError(f"cert-manager {cache.version} has no CRDs in deploy/crds")
    partial = cache.crds.with_name(cache.crds.name + ".partial")
    partial.write_text("\n---\n".join(documents) + "\n")
    os.replace(partial, cache.crds)

"""A fake `go` for the control-plane build's tests, written as a script onto a PATH folder.

`go get` fails while `get-failures-left` (in its state folder) is above 0, printing `error`'s
text; it waits while `hold` exists (so a test can start a second build mid-way). `go build -o X`
writes an executable X. Each call appends its subcommand to `calls`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tests.support.control_plane.versions import BINARIES, Cache, Versions

SCRIPT = r"""#!/usr/bin/env bash
state="$FAKE_GO_STATE"
echo "$1" >> "$state/calls"
case "$1" in
get)
    for _ in $(seq 1 1200); do [ -e "$state/hold" ] || break; sleep 0.05; done
    left=$(cat "$state/get-failures-left" 2>/dev/null || echo 0)
    if [ "$left" -gt 0 ]; then
        echo $((left - 1)) > "$state/get-failures-left"
        echo "go: downloading go.etcd.io/etcd/server/v3 v3.6.16"
        cat "$state/error" >&2
        exit 1
    fi ;;
build)
    while [ "$#" -gt 0 ]; do
        if [ "$1" = -o ]; then printf '#!/bin/sh\n' > "$2"; chmod +x "$2"; fi
        shift
    done ;;
*)
    echo "fake go: unexpected $*" >&2; exit 1 ;;
esac
"""


@dataclass(frozen=True)
class FakeGo:
    """The fake's PATH folder and state folder."""

    bin: Path
    state: Path

    def fail_get(self, times: int, error: str) -> None:
        (self.state / "get-failures-left").write_text(f"{times}\n")
        (self.state / "error").write_text(error + "\n")

    def calls(self, command: str) -> int:
        path = self.state / "calls"
        return path.read_text().split().count(command) if path.exists() else 0

    def environment(self, cache_root: Path) -> dict[str, str]:
        """The caller's environment with this go first on PATH and `cache_root` as the cache."""
        environment = dict(os.environ)
        environment["PATH"] = f"{self.bin}{os.pathsep}{environment['PATH']}"
        environment["FAKE_GO_STATE"] = str(self.state)
        environment["BRUPOP_CONTROL_PLANE_CACHE"] = str(cache_root)
        return environment


def install_fake_go(folder: Path) -> FakeGo:
    fake = FakeGo(folder / "bin", folder / "state")
    fake.bin.mkdir(parents=True)
    fake.state.mkdir()
    script = fake.bin / "go"
    script.write_text(SCRIPT)
    script.chmod(0o755)
    return fake


def cache_missing_only_etcd(root: Path) -> Cache:
    """A cache where everything but etcd is built, so a build runs `go get` and `go build` once."""
    cache = Cache(root, Versions())
    cache.bin.mkdir(parents=True)
    for name in BINARIES:
        if name != "etcd":
            cache.binary(name).write_text("#!/bin/sh\n")
            cache.binary(name).chmod(0o755)
    cache.kwok_stages.write_text("{}\n")
    return cache

"""The Bottlerocket host under each real node: the host emulator serving the Bottlerocket API
on DIR/nodes/<name>/host/api.sock (the node's /run/api.sock) and a static `apiclient`
stand-in at DIR/nodes/<name>/host/apiclient (the node's /bin/apiclient), built from
apiclient_go/ with Go's standard library only. The emulator's reboot runs
`scripts/control-plane reboot DIR <name>`: the node's containers are stopped as a shutdown
stops them, the caller (`apiclient` in the agent's container) first.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.support.control_plane.build_lock import build_lock
from tests.support.control_plane.gotool import Go, Progress
from tests.support.control_plane.processes import RunFolder, is_ours, log_tail, start

SOURCE = Path(__file__).resolve().parent / "apiclient_go" / "main.go"
SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "control-plane"
CURRENT_VERSION = "1.50.0"
OFFERED_VERSION = "1.51.0"
READY_SECONDS = 60.0


class HostFailure(Exception):
    """A node's host API could not be started."""


def apiclient_binary(cache_root: Path) -> Path:
    return cache_root / "apiclient-standin" / "bin" / "apiclient"


def build_apiclient(cache_root: Path, go: Go | None = None) -> Path:
    """The static stand-in, built once into the cache (a rebuild when its source changed)."""
    home = cache_root / "apiclient-standin"
    target = apiclient_binary(cache_root)
    go = go or Go(home / "build.log")
    with build_lock(home / "build.lock"):
        stamp = home / "source.go"
        if target.exists() and stamp.is_file() and stamp.read_bytes() == SOURCE.read_bytes():
            return target
        module = home / "module"
        shutil.rmtree(module, ignore_errors=True)
        module.mkdir(parents=True)
        shutil.copy(SOURCE, module / "main.go")
        (module / "go.mod").write_text("module local/apiclient\n\ngo 1.26.0\n")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name("apiclient.partial")
        with Progress().step("apiclient stand-in: built"):
            go.run(module, "build", "-trimpath", "-ldflags", "-s -w", "-o", str(partial), ".")
        os.replace(partial, target)
        shutil.copy(SOURCE, stamp)
    return target


def emulator_argv(socket_path: Path, reboot: list[str]) -> list[str]:
    """`python -m brupop.hostsim serve ...`: as recorded, so `down` knows the process again
    (a console script's command line shows the interpreter instead)."""
    program = [sys.executable, "-m", "brupop.hostsim"]
    return [*program, "serve", "--socket", str(socket_path), "--reboot-command", *reboot]


def start_host(
    root: Path,
    node: str,
    cache_root: Path,
    reboot: list[str] | None = None,
    settings: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Serve node `node`'s host API and place the stand-in beside its socket (in
    `host_folder(root, node)`); the emulator's process, which outlives the caller.
    `reboot` defaults to the node's real reboot (`scripts/control-plane reboot DIR NODE`);
    `settings` are more BRUPOP_SIM_* variables (the emulator's timings, faults)."""
    host = host_folder(root, node)
    (host / "state").mkdir(parents=True, exist_ok=True)
    shutil.copy(build_apiclient(cache_root), host / "apiclient")
    (host / "apiclient").chmod(0o755)
    command = reboot if reboot is not None else [str(SCRIPT), "reboot", str(root), node]
    environment = {
        "BRUPOP_SIM_HOST_DIR": str(host / "state"),
        "BRUPOP_SIM_NODE_NAME": node,
        "BRUPOP_SIM_CURRENT_VERSION": CURRENT_VERSION,
        "BRUPOP_SIM_TARGET_VERSION": OFFERED_VERSION,
        **(settings or {}),
    }
    folder = RunFolder(root)
    name = f"host-api-{node}"
    previous = folder.read(name)
    if previous is not None and is_ours(previous):
        raise HostFailure(f"{name} already runs (pid {previous.pid})")
    process = start(folder, name, emulator_argv(host / "api.sock", command), environment)
    deadline = time.monotonic() + READY_SECONDS
    while not answers(host / "api.sock"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise HostFailure(
                f"{name} did not serve {host / 'api.sock'}:\n{log_tail(folder.log(name))}"
            )
        time.sleep(0.1)
    return process


def host_folder(root: Path, node: str) -> Path:
    """DIR/nodes/<node>/host: api.sock, apiclient, and the emulated host's state/."""
    return root / "nodes" / node / "host"


def answers(path: Path) -> bool:
    """A connection to the socket is accepted."""
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def start_hosts(root: Path, cache_root: Path) -> None:
    """A host under every real node of DIR (DIR/nodes/real-node-*); `down` stops them."""
    for folder in sorted((root / "nodes").glob("real-node-*")):
        start_host(root, folder.name, cache_root)

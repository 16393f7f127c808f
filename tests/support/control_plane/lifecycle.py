"""`up`, `down` and `status` over a run folder DIR."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support.control_plane import components, probes
from tests.support.control_plane.pki import (
    Pki,
    make_pki,
    rotate_service_account_key,
    write_kubeconfig,
)
from tests.support.control_plane.processes import (
    RunFolder,
    is_ours,
    kill,
    log_tail,
    resident_mib,
    start,
    stop,
    wait_exited,
)
from tests.support.control_plane.versions import Cache

ORDER = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok")
READY_SECONDS = {"etcd": 30.0, "kube-apiserver": 90.0, "kube-controller-manager": 60.0}
READY_SECONDS["kwok"] = 30.0


class StartFailure(Exception):
    """A component exited or did not become ready in time."""


@dataclass(frozen=True)
class Plan:
    """Everything `up` needs to start one component and know when it is ready."""

    name: str
    argv: list[str]
    ready: Callable[[], bool]


def up(root: Path, cache: Cache) -> int:
    began = time.monotonic()
    folder = RunFolder(root)
    missing = cache.missing()
    if missing:
        say(
            f"{', '.join(missing)} not built in {cache.bin}: run `scripts/control-plane build`",
            True,
        )
        return 1
    if any(is_ours(record) for record in folder.all_records()):
        say(f"already up in {root}; run `scripts/control-plane down {root}` first", True)
        return 1
    plans, ports = prepare(root, cache)
    try:
        for plan in plans:
            launch(folder, plan)
    except StartFailure as failure:
        say(str(failure), True)
        down(root, cache, quiet=True)
        return 1
    say(
        f"ready in {time.monotonic() - began:.1f} s at {ports.server}; KUBECONFIG={root}/kubeconfig"
    )
    return 0


def prepare(root: Path, cache: Cache) -> tuple[list[Plan], components.Ports]:
    """Fresh certificates, ports, kubeconfigs and data folder; the start plan."""
    for stale in ("etcd", "pki", "apiserver-generated", "logs"):
        shutil.rmtree(root / stale, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    pki = make_pki(root / "pki")
    ports = components.free_ports()
    ports.save(root / "ports.json")
    for client, file in (("admin", "kubeconfig"), ("kcm", "kcm.kubeconfig")):
        write_kubeconfig(root / file, pki, client, ports.server)
    write_kubeconfig(root / "kwok.kubeconfig", pki, "kwok", ports.server)
    return start_plan(root, cache, pki, ports), ports


def start_plan(root: Path, cache: Cache, pki: Pki, ports: components.Ports) -> list[Plan]:
    return [
        Plan("etcd", components.etcd(cache, root, ports), lambda: probes.etcd_healthy(ports)),
        Plan(
            "kube-apiserver",
            components.apiserver(cache, root, pki, ports),
            lambda: probes.apiserver_ready(pki, ports),
        ),
        Plan(
            "kube-controller-manager",
            components.controller_manager(cache, root, pki),
            lambda: probes.controller_manager_ready(pki, ports),
        ),
        Plan("kwok", components.kwok(cache, root, ports), lambda: probes.kwok_ready(ports)),
    ]


def launch(folder: RunFolder, plan: Plan) -> None:
    began = time.monotonic()
    process = start(folder, plan.name, plan.argv)
    wait_ready(folder, plan, process)
    say(f"{plan.name} ready ({time.monotonic() - began:.1f} s, pid {process.pid})")


def wait_ready(folder: RunFolder, plan: Plan, process: subprocess.Popen[bytes]) -> None:
    """Poll until ready; fail at once if the process exits, or at the deadline."""
    seconds = READY_SECONDS.get(plan.name, 60.0)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        code = process.poll()
        if code is not None:
            raise failure(folder, plan.name, f"exited with code {code}")
        if plan.ready():
            return
        time.sleep(0.2)
    raise failure(folder, plan.name, f"was not ready after {seconds:.0f} s")


def failure(folder: RunFolder, name: str, what: str) -> StartFailure:
    log = folder.log(name)
    return StartFailure(f"{name} {what}; the end of {log}:\n{log_tail(log)}")


def restart(
    root: Path,
    cache: Cache,
    name: str,
    *,
    graceful: bool = True,
    pause_seconds: float = 0.0,
    new_signing_key: bool = False,
) -> float:
    """Stop component `name` (SIGTERM as `down` does; SIGKILL when not `graceful`: a crash),
    wait `pause_seconds`, start it again with the same flags, ports and certificates, and wait
    until it is ready: the outage a rolling upgrade or a crash makes. The seconds it was down.
    `new_signing_key` (kube-apiserver): it comes back with a fresh service-account key and
    without the old one's public half, as after a key rotation that retired the old key."""
    folder = RunFolder(root)
    record = folder.read(name)
    if record is None or not is_ours(record):
        raise StartFailure(f"{name} is not running in {root}")
    ports = components.Ports.load(root / "ports.json")
    (plan,) = [
        plan for plan in start_plan(root, cache, Pki(root / "pki"), ports) if plan.name == name
    ]
    began = time.monotonic()
    if graceful:
        stop(folder, record)
        wait_exited(record.pid, 10.0)
    else:
        kill(folder, record)
    if not components.wait_ports_free(ports, name):
        raise StartFailure(f"{name}'s ports are still held after it stopped")
    time.sleep(pause_seconds)
    if new_signing_key:
        rotate_service_account_key(Pki(root / "pki"))
    launch(folder, plan)
    return time.monotonic() - began


def restart_command(
    root: Path, cache: Cache, name: str, *, kill: bool, new_signing_key: bool = False
) -> int:
    """`restart DIR COMPONENT [--kill] [--new-signing-key]`: run from its own process, so the
    component it starts again is nobody's child, like the ones `up` starts."""
    try:
        outage = restart(root, cache, name, graceful=not kill, new_signing_key=new_signing_key)
    except StartFailure as failure:
        say(str(failure), True)
        return 1
    say(f"{name} back after {outage:.1f} s")
    return 0


def down(root: Path, cache: Cache, quiet: bool = False) -> int:
    """Stop, newest first, every recorded process that is still ours. Safe to repeat."""
    folder = RunFolder(root)
    records = {record.name: record for record in folder.all_records()}
    if not records and not quiet:
        say(f"nothing recorded in {root}; nothing to stop")
    for name in [*reversed(ORDER), *sorted(set(records) - set(ORDER))]:
        if name in records:
            outcome = stop(folder, records[name])
            if not quiet:
                say(outcome)
    return 0


def status(root: Path, cache: Cache) -> int:
    """One line per component; exit 0 only when all four run."""
    folder = RunFolder(root)
    running = 0
    for name in ORDER:
        record = folder.read(name)
        if record is not None and is_ours(record):
            running += 1
            print(
                f"{name}: running (pid {record.pid}, RSS {resident_mib(record.pid) or 0:.0f} MiB)"
            )
        else:
            print(f"{name}: not running")
    ports_file = root / "ports.json"
    if ports_file.exists():
        print(f"server: {components.Ports.load(ports_file).server}")
    return 0 if running == len(ORDER) else 1


def say(line: str, problem: bool = False) -> None:
    print(f"control-plane: {line}", file=sys.stderr if problem else sys.stdout, flush=True)

"""The static `apiclient` stand-in (what a real node's /bin/apiclient is) against the host
emulator serving the Bottlerocket API on a unix socket (the node's /run/api.sock): it prints
what the emulator's per-call `apiclient` prints, drives the real adapter through a whole
update, and the reboot it asks for kills it and its caller with SIGTERM, as the seed says.
Needs Go (the stand-in is built into the control-plane cache), not a kubelet nor the
control plane."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from brupop.hostsim import control
from tests.contract.update_api.emulated_host import FAST_HOST, EmulatedHost
from tests.support.control_plane import bottlerocket_host
from tests.support.control_plane.processes import RunFolder, stop
from tests.support.control_plane.versions import cache_root

REPOSITORY = Path(__file__).resolve().parents[2]
NODE = "standin-node"
# The reboot a node does, reduced to what the caller sees: SIGTERM to apiclient's parent, then
# to apiclient, as the emulator's shutdown does. (The other order is a race the caller can lose
# on a loaded machine: it may see apiclient die and report before its own SIGTERM arrives.)
KILL_CALLER = (
    "import os, signal\n"
    "pid = int(os.environ['BRUPOP_SIM_CALLER_PID'])\n"
    "parent = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
    "os.kill(parent, signal.SIGTERM)\n"
    "os.kill(pid, signal.SIGTERM)\n"
)
WIRE_CALLS = [
    ["raw", "-u", "/os"],
    ["raw", "-u", "/updates/status"],
    ["raw", "-u", "/settings"],
    ["raw", "-u", "/no-such-route"],
    ["raw", "-u", "/os", "-m", "POST"],
    ["raw", "-u", "/actions/activate-update", "-m", "POST"],
    ["raw", "-u", "/actions/refresh-updates", "-m", "POST"],
    ["raw", "-m"],
    ["raw"],
    ["raw", "--bogus", "1"],
]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Path]:
    """A host serving its API on a socket, and an `apiclient` wrapper pointing the stand-in at
    it (a script here only because the test's socket is not at /run/api.sock)."""
    command = [sys.executable, "-c", KILL_CALLER]
    process = bottlerocket_host.start_host(tmp_path, NODE, cache_root(), command, FAST_HOST)
    host = bottlerocket_host.host_folder(tmp_path, NODE)
    wrapper = tmp_path / "apiclient"
    standin = shlex.quote(str(host / "apiclient"))
    socket = shlex.quote(str(host / "api.sock"))
    wrapper.write_text(f'#!/bin/sh\nexec {standin} --socket-path {socket} "$@"\n')
    wrapper.chmod(0o755)
    try:
        yield host
    finally:
        folder = RunFolder(tmp_path)
        record = folder.read(f"host-api-{NODE}")
        if record is not None:
            stop(folder, record)
        process.wait(timeout=30)


def call(program: Path, args: list[str]) -> tuple[int, bytes, bytes]:
    done = subprocess.run([str(program), *args], capture_output=True, timeout=60, check=False)
    return done.returncode, done.stdout, done.stderr


def test_the_standin_prints_what_the_emulators_apiclient_prints(
    served: Path, tmp_path: Path
) -> None:
    (tmp_path / "per-call").mkdir()
    per_call = EmulatedHost(
        tmp_path / "per-call",
        current=bottlerocket_host.CURRENT_VERSION,
        offered=bottlerocket_host.OFFERED_VERSION,
    )
    per_call.set_env(BRUPOP_SIM_NODE_NAME=NODE)
    wrapper = tmp_path / "apiclient"

    for args in WIRE_CALLS:
        standin, emulator = call(wrapper, args), call(per_call.apiclient, args)
        assert standin[:2] == emulator[:2], args
        # Usage errors: the same first line; each program words its own usage text.
        assert standin[2].splitlines()[:1] == emulator[2].splitlines()[:1], args


def test_the_standin_without_a_socket_fails_as_apiclient_does(tmp_path: Path) -> None:
    standin = bottlerocket_host.build_apiclient(cache_root())
    code, out, err = call(
        standin, ["--socket-path", str(tmp_path / "gone.sock"), "raw", "-u", "/os"]
    )

    assert (code, out) == (1, b"")
    assert err == (
        b"Failed GET request to '/os': Failed to send request: error trying to connect: "
        b"No such file or directory (os error 2)\n"
    )


def test_a_whole_update_through_the_standin_ends_with_the_reboot_killing_it_and_its_caller(
    served: Path, tmp_path: Path
) -> None:
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.contract.update_api.reboot_child",
            str(tmp_path / "apiclient"),
            "handler",
        ],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert child.returncode == 0, child.stderr
    assert child.stdout.splitlines() == [
        "ready",
        f"reboot killed apiclient with signal {int(signal.SIGTERM)}",
        f"sigterm received: [{int(signal.SIGTERM)}]",
    ]
    report = control.read_host(str(served / "state"))
    assert (report["version_id"], report["reboots"]) == (bottlerocket_host.OFFERED_VERSION, 1)
    version = call(tmp_path / "apiclient", ["raw", "-u", "/os"])
    assert version[0] == 0 and b'"version_id":"1.51.0"' in version[1]

"""A simulation stopped from outside (SIGTERM like Ctrl-C, or SIGKILL) leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.polling import wait_until

MARK = "BRUPOP_E2E_RUN"


def _processes_of(run: Path) -> list[int]:
    """Pids of this user's processes that inherited this run's mark in their environment."""
    marker = f"{MARK}={run}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _start(tmp_path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "brupop", "simulate", "--nodes", "3", "--live", "off",
         "--log-dir", str(tmp_path / "logs"), "--work-dir", str(tmp_path / "work"),
         "--timeout", "60"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, MARK: str(tmp_path)},
        preexec_fn=_ctrl_c_reaches_it,
    )  # fmt: skip


def _ctrl_c_reaches_it() -> None:
    """A shell without job control starts background commands with SIGINT ignored, and an
    ignored signal stays ignored across exec: run from there, the test would send SIGINT to a
    simulation that cannot hear it. Give it the terminal's default, as Ctrl-C would find."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_agents(tmp_path: Path, count: int) -> None:
    """Until every agent has written its first log line."""
    logs = [tmp_path / "logs" / f"node-0{index}.log" for index in range(1, count + 1)]
    wait_until(
        lambda: all(log.exists() and log.stat().st_size > 0 for log in logs),
        "every agent's first log line",
        seconds=30,
        interval=0.1,
    )


@pytest.mark.e2e
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_stopping_the_simulation_stops_every_agent(tmp_path: Path, sig: signal.Signals) -> None:
    simulation = _start(tmp_path)
    try:
        _wait_for_agents(tmp_path, 3)
        assert len(_processes_of(tmp_path)) >= 5  # simulation, runtime and 3 agents (at least)
        os.kill(simulation.pid, sig)
        simulation.wait(timeout=30)
    finally:
        if simulation.poll() is None:
            simulation.kill()
    wait_until(lambda: _processes_of(tmp_path) == [], "no process of the run left", interval=0.1)
    if sig is not signal.SIGKILL:
        assert simulation.returncode == 130

"""Run `brupop simulate` as a user would (a real process) and read what it leaves behind."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.policy_file import write_policy_file

# Well above any run's own --timeout, so the simulation's verdict, not pytest, ends a slow run.
PROCESS_TIMEOUT_SECONDS = 150


@dataclass(frozen=True)
class SimulateRun:
    """The exit code, output, JSON report and log directory of one `brupop simulate`."""

    returncode: int
    stdout: str
    stderr: str
    report: dict[str, Any]
    log_dir: Path

    @property
    def last_line(self) -> str:
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def node(self, name: str) -> dict[str, Any]:
        for node in self.report["nodes"]:
            if node["name"] == name:
                return dict(node)
        raise KeyError(name)

    def agent_log(self, name: str) -> str:
        return (self.log_dir / f"{name}.log").read_text(encoding="utf-8", errors="replace")

    def agent_events(self, name: str) -> list[dict[str, Any]]:
        events = []
        for line in self.agent_log(name).splitlines():
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except ValueError:
                    continue
        return events


def run_simulate(tmp_path: Path, *flags: str) -> SimulateRun:
    """`python -m brupop simulate FLAGS --report ... --log-dir ...`, waited for."""
    report_path = tmp_path / "report.json"
    log_dir = tmp_path / "logs"
    command = [
        sys.executable, "-m", "brupop", "simulate", *flags,
        "--report", str(report_path), "--log-dir", str(log_dir), "--live", "off",
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=PROCESS_TIMEOUT_SECONDS, check=False
    )
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    return SimulateRun(done.returncode, done.stdout, done.stderr, report, log_dir)


@dataclass(frozen=True)
class Simulate:
    """`brupop simulate` in one test's directory; `policy`, when given, is the spec of the
    `default` update policy (YAML indented by two) written there and passed as `--policy`.
    `backend` are the flags that choose the cluster (none: the in-memory one; tests/realcluster
    gives `--kubeconfig FILE`), so one scenario runs on both backends."""

    directory: Path
    backend: tuple[str, ...] = ()

    def __call__(self, *flags: str, policy: str | None = None) -> SimulateRun:
        if policy is not None:
            flags = (*flags, "--policy", write_policy_file(self.directory, policy))
        return run_simulate(self.directory, *self.backend, *flags)


HOST_SPEEDS = pytest.mark.parametrize("late", [False, True], ids=["prompt-hosts", "late-hosts"])
"""Run a scenario twice: with hosts that answer at once, and with `late_hosts`."""


def late_hosts(nodes: int, *, late: bool = True) -> tuple[str, ...]:
    """`--late-host` for every node but node-01 (none when not `late`): their hosts answer
    their first call 15 s late, so their agents report late, as over a real API server."""
    if not late:
        return ()
    return tuple(
        flag for index in range(2, nodes + 1) for flag in ("--late-host", f"node-{index:02d}")
    )


def explain(run: SimulateRun) -> str:
    """What to print when an assertion about a run fails."""
    return (
        f"exit {run.returncode}\n--- stdout\n{run.stdout[-6000:]}\n--- stderr\n{run.stderr[-3000:]}"
    )

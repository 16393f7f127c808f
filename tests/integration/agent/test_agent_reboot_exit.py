"""The seed: a real agent process asks the emulated host to reboot and exits 0, quietly.

Each test runs `python -m tests.support.agent_scenario` (the `brupop agent` launch path with the
real apiclient adapter over the host emulator, and a fake cluster side) as an OS process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_emulated_host import EMULATOR, EmulatedHost
from tests.support.polling import wait_until

REPO = Path(__file__).resolve().parents[3]
REBOOT_EVENT = "node.rebooting_into_update"


@dataclass(frozen=True)
class AgentRun:
    """What one agent process left behind."""

    code: int
    lines: list[dict[str, Any]]
    stderr: str
    report: dict[str, Any]

    def at(self, *levels: str) -> list[dict[str, Any]]:
        return [line for line in self.lines if line.get("level") in levels]

    def events(self, event: str) -> list[dict[str, Any]]:
        return [line for line in self.lines if line.get("event") == event]


def _agent_env(host: EmulatedHost, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MY_NODE_NAME": "ip-10-0-0-1.us-west-2.compute.internal",
        "BRUPOP_NAMESPACE": "brupop-bottlerocket-aws",
        "APICLIENT_PATH": EMULATOR,
        "LOGGING_FORMATTER": "json",
        "TERMINATION_LOG": str(tmp_path / "termination-log"),
        "AGENT_SCENARIO_REPORT": str(tmp_path / "report.json"),
        "AGENT_SCENARIO_WAITING_FILE": str(tmp_path / "waiting"),
        "APICLIENT_RATE_PERIOD_SECONDS": "0",
        "APICLIENT_RETRY_BASE_SECONDS": "0.05",
        "APICLIENT_RETRY_MAX_SECONDS": "0.2",
        "HOST_POLL_INTERVAL_SECONDS": "0.05",
        "AGENT_LOOP_INTERVAL_SECONDS": "0.2",
        **host.env(),
        **extra,
    }


def _start(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.agent_scenario"],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen[str], tmp_path: Path) -> AgentRun:
    stdout, stderr = process.communicate(timeout=60)
    assert stdout == ""
    lines = [json.loads(line) for line in stderr.splitlines() if line.strip()]  # JSON only
    report_file = tmp_path / "report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {}
    return AgentRun(process.returncode, lines, stderr, report)


def _assert_quiet(run: AgentRun) -> None:
    assert run.at("warning", "error", "critical") == [], run.stderr
    assert "Traceback" not in run.stderr


@pytest.fixture
def ready_host(tmp_path: Path, request: pytest.FixtureRequest) -> EmulatedHost:
    """A host that has staged and activated 1.1.0 while running 1.0.0."""
    kills = getattr(request, "param", "parent-and-self")
    host = EmulatedHost(tmp_path / "host", reboot_kills=kills)
    host.directory.mkdir()
    host.make_ready()
    return host


REBOOT_SPEC = {
    "AGENT_SCENARIO_SPEC": "RebootedIntoUpdate:1.1.0",
    "AGENT_SCENARIO_STATUS": "StagedAndPerformedUpdate:1.0.0:1.1.0",
}


def test_agent_exits_zero_with_one_info_line_when_the_reboot_kills_it_and_apiclient(
    ready_host: EmulatedHost, tmp_path: Path
) -> None:
    run = _finish(_start(_agent_env(ready_host, tmp_path, **REBOOT_SPEC)), tmp_path)

    assert run.code == 0, run.stderr
    (line,) = run.events(REBOOT_EVENT)
    assert line["level"] == "info" and line["version"] == "1.1.0"
    assert line["node"] == "ip-10-0-0-1.us-west-2.compute.internal"
    _assert_quiet(run)
    assert run.events("agent.stopped") == []  # the reboot line is the only word on the way out
    assert run.report["node_calls"] == ["cordon_and_drain"]
    assert run.report["status_writes"] == []
    assert ready_host.running_version() == "1.1.0"


@pytest.mark.parametrize("ready_host", ["self"], indirect=True)
def test_agent_exits_zero_with_one_info_line_when_the_reboot_kills_only_apiclient(
    ready_host: EmulatedHost, tmp_path: Path
) -> None:
    env = _agent_env(ready_host, tmp_path, REBOOT_WAIT_SECONDS="0.5", **REBOOT_SPEC)

    run = _finish(_start(env), tmp_path)

    assert run.code == 0, run.stderr
    (line,) = run.events(REBOOT_EVENT)
    assert line["level"] == "info" and line["apiclient"] == "killed by SIGTERM"
    _assert_quiet(run)
    assert ready_host.running_version() == "1.1.0"


@pytest.mark.parametrize("ready_host", ["none"], indirect=True)
def test_agent_waits_then_exits_zero_when_the_reboot_request_returns(
    ready_host: EmulatedHost, tmp_path: Path
) -> None:
    env = _agent_env(ready_host, tmp_path, REBOOT_WAIT_SECONDS="0.5", **REBOOT_SPEC)
    started = time.monotonic()

    run = _finish(_start(env), tmp_path)

    assert run.code == 0, run.stderr
    (line,) = run.events(REBOOT_EVENT)
    assert line["level"] == "info" and line["awaiting_shutdown_seconds"] == 0.5
    assert time.monotonic() - started >= 0.5
    _assert_quiet(run)


def test_idle_agent_exits_zero_with_one_info_line_on_sigterm(tmp_path: Path) -> None:
    host = EmulatedHost(tmp_path / "host", offered_version=None)
    host.directory.mkdir()
    # A long poll far longer than the test: the stop must cut it short.
    process = _start(_agent_env(host, tmp_path, SHADOW_WAIT_SECONDS="300"))
    waiting = tmp_path / "waiting"
    wait_until(lambda: waiting.exists() or process.poll() is not None, "the long poll", seconds=30)
    assert waiting.exists(), process.communicate(timeout=5)

    process.send_signal(signal.SIGTERM)
    run = _finish(process, tmp_path)  # within its 60 s: the 300 s poll was cut short

    assert run.code == 0, run.stderr
    (line,) = run.events("agent.stopped")
    assert line["level"] == "info"
    _assert_quiet(run)
    assert [w["current_state"] for w in run.report["status_writes"]] == ["Idle"]


def test_agent_exits_zero_with_one_info_line_when_sigterm_comes_during_start_up(
    tmp_path: Path,
) -> None:
    host = EmulatedHost(tmp_path / "host", offered_version=None)
    host.directory.mkdir()

    run = _finish(_start(_agent_env(host, tmp_path, AGENT_SCENARIO_EARLY_SIGTERM="1")), tmp_path)

    assert run.code == 0, run.stderr
    (line,) = run.events("agent.stopped")
    assert line["level"] == "info"
    _assert_quiet(run)
    assert run.report["status_writes"] == []


def test_a_second_sigterm_while_the_interpreter_shuts_down_does_not_kill_the_stopping_agent(
    tmp_path: Path,
) -> None:
    host = EmulatedHost(tmp_path / "host", offered_version=None)
    host.directory.mkdir()
    env = _agent_env(
        host, tmp_path, AGENT_SCENARIO_EARLY_SIGTERM="1", AGENT_SCENARIO_LATE_SIGTERM="1"
    )

    run = _finish(_start(env), tmp_path)

    assert run.code == 0, run.stderr  # not -15: the stop it had decided on stands
    (line,) = run.events("agent.stopped")
    assert line["level"] == "info"
    _assert_quiet(run)


def test_brupop_agent_keeps_its_exit_code_when_sigterm_comes_as_the_interpreter_shuts_down(
    tmp_path: Path,
) -> None:
    probe = (
        "import sys\n"
        "from tests.support.agent_scenario import SigtermAtShutdown\n"
        "from brupop.cli.main import main\n"
        "late = SigtermAtShutdown()\n"
        "sys.exit(main(['agent']))\n"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # no MY_NODE_NAME: exit 2

    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert "MY_NODE_NAME" in done.stderr


def test_spec_error_reset_ends_the_agent_with_exit_1_and_a_termination_message(
    tmp_path: Path,
) -> None:
    host = EmulatedHost(tmp_path / "host", offered_version=None)
    host.directory.mkdir()
    env = _agent_env(host, tmp_path, AGENT_SCENARIO_SPEC="ErrorReset")

    run = _finish(_start(env), tmp_path)

    assert run.code == 1
    (line,) = run.at("error")
    assert line["event"] == "agent.fatal"
    assert "ErrorReset" in (tmp_path / "termination-log").read_text()
    assert "Traceback" not in run.stderr

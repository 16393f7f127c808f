"""`brupop controller` as a process: bad settings stop it at start with one line naming the
variable and the accepted forms; it serves /metrics, /healthz, /readyz and /status; SIGTERM
releases the Lease and exits 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from brupop.entrypoints.controller.main import main
from tests.support.controller_start import CONTROLLER_ENV, controller_environment, refusal_at_start
from tests.support.polling import wait_until

ALL_VARIABLES = (
    "MY_NODE_NAME",
    "MAX_CONCURRENT_UPDATE",
    "SCHEDULER_CRON_EXPRESSION",
    "UPDATE_WINDOW_START",
    "UPDATE_WINDOW_STOP",
    "SCHEDULER_TIME_ZONE",
    "BRUPOP_CLUSTER",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from controller_environment(monkeypatch, ALL_VARIABLES)


@pytest.mark.parametrize(
    ("variable", "value", "accepted"),
    [
        ("MAX_CONCURRENT_UPDATE", "0", "positive integer"),
        ("MAX_CONCURRENT_UPDATE", "many", "`unlimited`"),
        ("SCHEDULER_CRON_EXPRESSION", "* * * * *", "sec min hour day-of-month"),
        ("SCHEDULER_CRON_EXPRESSION", "0 0 10 * * Mon 2020", "no fire time"),
        ("SCHEDULER_CRON_EXPRESSION", "* * 10-12 * * Funday *", "not a known name"),
        ("UPDATE_WINDOW_START", "09:00:00", "set both"),
        ("SCHEDULER_TIME_ZONE", "Mars/Olympus", "IANA time zone"),
        ("CONTROLLER_TICK_SECONDS", "0", "greater than 0"),
        ("CONTROLLER_RESYNC_SECONDS", "0", "greater than or equal to 1"),
        ("CONTROLLER_RESYNC_SECONDS", "1e9", "less than or equal to 86400"),
        ("TIMEOUT_REBOOTED_INTO_UPDATE_SECONDS", "never", "number"),
        ("TIMEOUT_IDLE_SECONDS", "inf", "finite number"),
        ("TIMEOUT_MONITORING_UPDATE_SECONDS", "1e12", "less than or equal to 604800"),
        ("LEADER_ELECTION_LEASE_SECONDS", "6", "twice"),
        ("BRUPOP_CLUSTER", "minikube", "'kubernetes' or 'memory'"),
        # From a hostile environment: a tzdata folder, a path, Unicode digits, a huge value.
        ("SCHEDULER_TIME_ZONE", "US", "a group of time zones"),
        ("SCHEDULER_TIME_ZONE", "Europe", "a group of time zones"),
        ("SCHEDULER_TIME_ZONE", "../etc/passwd", "not an IANA time zone"),
        ("SCHEDULER_TIME_ZONE", "Europe/" + "x" * 300, "1 to 64 characters"),
        ("SCHEDULER_CRON_EXPRESSION", "0 0 ² * * * *", "hours: '²' is not a number"),
        ("SCHEDULER_CRON_EXPRESSION", "0 0 \u0661 * * * *", "hours: '\u0661' is not a number"),
        ("SCHEDULER_CRON_EXPRESSION", "0/³ * * * * * *", "must be a positive integer"),
        ("SCHEDULER_CRON_EXPRESSION", "0 " * 100_000, "longer than 1024 characters"),
    ],
)
def test_a_bad_setting_stops_the_controller_at_start_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    accepted: str,
) -> None:
    assert accepted in refusal_at_start(monkeypatch, capsys, variable, value)


def test_the_node_name_is_required(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MY_NODE_NAME")
    assert main([]) == 2
    assert capsys.readouterr().err.startswith("brupop controller: MY_NODE_NAME: required")


def test_the_legacy_window_alone_is_accepted_as_the_original_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from brupop.entrypoints.controller.settings import load_settings

    monkeypatch.setenv("UPDATE_WINDOW_START", "22:00:00")
    monkeypatch.setenv("UPDATE_WINDOW_STOP", "02:30:00")
    _, config = load_settings()
    assert config.window.schedule.expression == "* * 22-23,0-2 * * * *"


# "2": as the chart runs it, without docstrings and asserts.
@pytest.mark.parametrize("optimization", ["0", "2"])
def test_the_process_serves_probes_metrics_and_status_and_ends_cleanly_on_sigterm(
    optimization: str,
) -> None:
    env = {
        **os.environ,
        **CONTROLLER_ENV,
        "CONTROLLER_METRICS_PORT": "0",
        "CONTROLLER_BIND_ADDRESS": "127.0.0.1",
        "LOGGING_FORMATTER": "json",
        "CONTROLLER_TICK_SECONDS": "0.2",
        "PYTHONOPTIMIZE": optimization,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "brupop", "controller"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        port = _serving_port(process.stderr)
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _get(f"{base}/readyz")[0] == 200, "GET /readyz answered 200")
        assert _get(f"{base}/healthz") == (200, "ok\n")
        code, metrics = _get(f"{base}/metrics")
        assert code == 200 and "brupop_controller_leader 1.0" in metrics
        assert "brupop_max_concurrent_update 1.0" in metrics.splitlines()
        code, body = _get(f"{base}/status")
        assert json.loads(body)["leader"] is True
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        rest = process.stderr.read()
        assert '"leader.released"' in rest and "Traceback" not in rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def _serving_port(stream: object) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = stream.readline()  # type: ignore[attr-defined]
        if not line:
            break
        if '"controller.serving"' in line:
            return int(json.loads(line)["port"])
    raise AssertionError("the controller never said where it serves")


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()

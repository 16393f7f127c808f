"""The real adapter against the host emulator, a real subprocess: the host's asynchronous
commands, its lock, its 404 before the first refresh, its 409s, and a reboot that kills.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from brupop.domain.host.host import HostUpdateState
from brupop.ports.errors import HostCommandFailedError, HostRejectedError, HostUnavailableError
from tests.contract.update_api.emulated_host import EmulatedHost

REPO_ROOT = Path(__file__).resolve().parents[3]

LOCK_HELD_SECONDS = 8.0


def _run_agent_child(host: EmulatedHost, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.contract.update_api.reboot_child", str(host.apiclient), mode],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_full_update_ends_with_the_reboot_terminating_the_caller(tmp_path: Path) -> None:
    host = EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")
    host.set_env(BRUPOP_SIM_REBOOT_KILLS=None)  # the default: SIGTERM to caller and to itself

    child = _run_agent_child(host, "plain")

    assert child.returncode == -signal.SIGTERM, child.stderr
    assert child.stdout == "ready\n"  # nothing ran after reboot()
    assert host.report() == {
        "node_name": "node-under-test",
        "version_id": "1.1.0",
        "offered_version": "1.1.0",
        "reboots": 1,
        "update_state": None,
    }
    api = host.adapter()
    assert api.os_info().version_id == "1.1.0"
    assert api.update_status() is None


def test_reboot_kills_apiclient_and_the_adapter_says_so_with_the_signal(tmp_path: Path) -> None:
    host = EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")
    host.set_env(BRUPOP_SIM_REBOOT_KILLS=None)

    child = _run_agent_child(host, "handler")

    assert child.returncode == 0, child.stderr
    assert child.stdout.splitlines() == [
        "ready",
        f"reboot killed apiclient with signal {int(signal.SIGTERM)}",
        f"sigterm received: [{int(signal.SIGTERM)}]",
    ]
    assert host.report()["version_id"] == "1.1.0"


def test_reboot_returns_normally_when_the_host_answers_204(tmp_path: Path) -> None:
    host = EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")  # REBOOT_KILLS=none

    host.adapter().reboot()

    assert host.report()["reboots"] == 1
    assert host.report()["version_id"] == "1.0.0"


def test_update_status_is_423_while_the_host_works_and_the_adapter_waits(tmp_path: Path) -> None:
    host = EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")
    host.set_env(BRUPOP_SIM_REFRESH_SECONDS="0.6")
    assert host.raw("raw", "-u", "/actions/refresh-updates", "-m", "POST").returncode == 0

    with pytest.raises(HostUnavailableError, match="423"):
        host.adapter(retries=0).update_status()

    status = host.adapter(retries=8, retry_base_seconds=0.1, retry_max_seconds=0.3).update_status()
    assert status is not None and status.update_state is HostUpdateState.AVAILABLE


def test_commands_posted_while_the_host_works_are_retried_until_the_lock_frees(
    tmp_path: Path,
) -> None:
    host = EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")
    # Long enough that a loaded machine still starts the next command while the host works.
    host.set_env(BRUPOP_SIM_REFRESH_SECONDS=str(LOCK_HELD_SECONDS))
    assert host.raw("raw", "-u", "/actions/refresh-updates", "-m", "POST").returncode == 0

    with pytest.raises(HostUnavailableError, match="Update lock held"):
        host.adapter(retries=0).refresh_updates()

    # Retried for longer than the lock is held (about 60 attempts of at most 0.5 s).
    api = host.adapter(retries=60, retry_base_seconds=0.25, retry_max_seconds=0.5)
    assert api.prepare_update().update_state is HostUpdateState.STAGED


def test_update_status_is_none_before_the_first_refresh_after_a_boot(tmp_path: Path) -> None:
    host = EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")
    api = host.adapter()

    assert api.update_status() is None
    api.refresh_updates()
    assert api.update_status() is not None
    api.reboot()
    assert api.update_status() is None


def test_a_command_the_state_does_not_allow_is_409_and_not_retried(tmp_path: Path) -> None:
    host = EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")
    api = host.adapter()

    with pytest.raises(HostRejectedError) as refused:
        api.activate_update()

    assert refused.value.status == 409
    events = [
        json.loads(line)["event"] for line in (host.dir / "host.log").read_text().splitlines()
    ]
    assert events.count("command.refused") == 1  # asked once: a retry would ask again
    assert refused.value.result is not None
    assert "Update action not allowed according to update state" in refused.value.result.stderr


def test_a_command_that_outlives_the_deadline_fails(tmp_path: Path) -> None:
    host = EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")
    host.set_env(BRUPOP_SIM_REFRESH_SECONDS="3")

    with pytest.raises(HostCommandFailedError, match="not finished within"):
        host.adapter(command_deadline_seconds=0.3).refresh_updates()


def test_a_reboot_during_a_command_discards_it_and_frees_the_lock(tmp_path: Path) -> None:
    host = EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")
    api = host.adapter()
    api.refresh_updates()
    host.set_env(BRUPOP_SIM_PREPARE_SECONDS="5")
    assert host.raw("raw", "-u", "/actions/prepare-update", "-m", "POST").returncode == 0

    api.reboot()

    # Not 423: the lock died with the host. Its worker held the lock until it ended, so the
    # host's state below is final: the discarded command can no longer finish.
    assert api.update_status() is None
    assert host.report()["update_state"] is None
    assert api.refresh_updates().update_state is HostUpdateState.AVAILABLE

"""Each fault the emulator can inject, seen raw and through the adapter: whatever apiclient
prints or however it ends, the adapter raises one of its typed HostApiError subclasses.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest

from brupop.ports.errors import (
    HostCommandFailedError,
    HostResponseError,
    HostUnavailableError,
)
from tests.contract.update_api.emulated_host import EmulatedHost


@pytest.fixture
def host(tmp_path: Path) -> EmulatedHost:
    return EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")


def test_fault_refresh_fails_is_a_failed_command(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_REFRESH_FAILS="1")

    with pytest.raises(HostCommandFailedError, match="refresh: host reports Failed"):
        host.adapter().refresh_updates()


def test_fault_prepare_fails_is_a_failed_command(host: EmulatedHost) -> None:
    host.adapter().refresh_updates()
    host.set_env(BRUPOP_SIM_FAULT_PREPARE_FAILS="1")

    with pytest.raises(HostCommandFailedError, match="prepare: host reports Failed"):
        host.adapter().prepare_update()


def test_fault_activate_fails_is_a_failed_command(host: EmulatedHost) -> None:
    api = host.adapter()
    api.refresh_updates()
    api.prepare_update()
    host.set_env(BRUPOP_SIM_FAULT_ACTIVATE_FAILS="1")

    with pytest.raises(HostCommandFailedError, match="activate: host reports Failed"):
        api.activate_update()


def test_fault_lock_stuck_answers_423_to_every_update_call(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_LOCK_STUCK="1")

    raw = host.raw("raw", "-u", "/actions/refresh-updates", "-m", "POST")
    assert (raw.returncode, raw.stdout) == (1, b"")
    assert b"Status 423 when POSTing /actions/refresh-updates: Update lock held" in raw.stderr
    with pytest.raises(HostUnavailableError, match="423"):
        host.adapter(retries=2).refresh_updates()
    with pytest.raises(HostUnavailableError, match="423"):
        host.adapter(retries=2).update_status()
    assert host.adapter().os_info().version_id == "1.0.0"  # /os is not the update API


def test_fault_garbage_stdout_is_a_response_error(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_GARBAGE_STDOUT="1")

    raw = host.raw("raw", "-u", "/os")
    assert raw.returncode == 0 and raw.stdout and raw.stderr == b""
    with pytest.raises(HostResponseError):
        host.adapter().os_info()
    with pytest.raises(HostResponseError):
        host.adapter().update_status()


def test_fault_garbage_stderr_is_transient_and_gives_up_as_unavailable(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_GARBAGE_STDERR="1")

    raw = host.raw("raw", "-u", "/os")
    assert raw.returncode == 1 and raw.stdout == b"" and raw.stderr
    with pytest.raises(HostUnavailableError, match="unreachable"):
        host.adapter(retries=2).os_info()


def test_fault_silent_exit_is_transient_and_gives_up_as_unavailable(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_SILENT_EXIT="3")

    raw = host.raw("raw", "-u", "/updates/status")
    assert (raw.returncode, raw.stdout, raw.stderr) == (3, b"", b"")
    with pytest.raises(HostUnavailableError, match="exit code 3"):
        host.adapter(retries=2).update_status()


def test_fault_socket_down_reads_like_apiclient_without_a_status(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_SOCKET_DOWN="1")

    raw = host.raw("raw", "-u", "/os")
    assert raw.returncode == 1
    assert raw.stderr.startswith(b"Failed GET request to '/os': Failed to send request: ")
    with pytest.raises(HostUnavailableError, match="unreachable"):
        host.adapter(retries=1).os_info()


def _running_for(host: EmulatedHost) -> bool:
    """Some process of this machine runs with this host's directory in its environment."""
    marker = f"BRUPOP_SIM_HOST_DIR={host.dir}\0".encode()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        with contextlib.suppress(OSError):  # a process that ended meanwhile, or not ours
            if marker in environ.read_bytes():
                return True
    return False


def test_fault_hang_is_killed_at_the_timeout_and_is_unavailable(host: EmulatedHost) -> None:
    # An hour's hang: the call's return shows the timeout ended it, not the emulator.
    host.set_env(BRUPOP_SIM_FAULT_HANG_SECONDS="3600")

    with pytest.raises(HostUnavailableError, match=r"no answer within 0\.3 s"):
        host.adapter(timeout_seconds=0.3).os_info()

    assert not _running_for(host), "the hung emulator was killed, not left running"
    log = host.dir / "host.log"  # a call the timeout cut before it logged leaves no line
    hangs = log.read_text().count('"fault": "hang"') if log.exists() else 0
    assert hangs <= 1, "the call was not retried"


def test_fault_times_limits_a_fault_to_the_first_calls(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_GARBAGE_STDOUT="1", BRUPOP_SIM_FAULT_TIMES="2")

    outputs = [host.raw("raw", "-u", "/os").stdout for _ in range(3)]

    assert b"garbage" in outputs[0] and b"garbage" in outputs[1]
    assert outputs[2].startswith(b'{"pretty_name"')


def test_a_transient_fault_that_passes_is_absorbed_by_retries(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_SOCKET_DOWN="1", BRUPOP_SIM_FAULT_TIMES="2")

    assert host.adapter(retries=3).os_info().version_id == "1.0.0"
    assert host.state()["fault_hits"] == 2


def test_fault_on_uris_limits_faults_to_the_listed_uris(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_GARBAGE_STDOUT="1", BRUPOP_SIM_FAULT_ON_URIS="/updates/status")

    assert host.adapter().os_info().version_id == "1.0.0"
    with pytest.raises(HostResponseError):
        host.adapter().update_status()


def test_fault_after_spares_the_first_commands_then_fails_every_later_one(
    host: EmulatedHost,
) -> None:
    host.set_env(BRUPOP_SIM_FAULT_REFRESH_FAILS="1", BRUPOP_SIM_FAULT_AFTER="1")
    api = host.adapter()

    assert api.refresh_updates().chosen_version() == "1.1.0"
    for _ in range(2):
        with pytest.raises(HostCommandFailedError, match="refresh: host reports Failed"):
            api.refresh_updates()
    assert (host.state()["fault_spared"], host.state()["fault_hits"]) == (1, 2)


def test_a_failing_command_fault_with_times_fails_only_once(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FAULT_REFRESH_FAILS="1", BRUPOP_SIM_FAULT_TIMES="1")
    api = host.adapter()

    with pytest.raises(HostCommandFailedError):
        api.refresh_updates()
    assert api.refresh_updates().chosen_version() == "1.1.0"


def test_a_late_host_answers_only_its_first_call_late(host: EmulatedHost) -> None:
    host.set_env(BRUPOP_SIM_FIRST_ANSWER_DELAY_SECONDS="1")
    started = time.monotonic()

    first = host.adapter().os_info()
    waited = time.monotonic() - started
    later = [host.adapter().os_info() for _ in range(2)]

    assert waited >= 1.0
    assert [info.version_id for info in (first, *later)] == ["1.0.0"] * 3
    log = (host.dir / "host.log").read_text()
    assert log.count('"event": "host.late"') == 1, log

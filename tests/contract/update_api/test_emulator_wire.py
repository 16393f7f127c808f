"""The emulator prints exactly what `apiclient raw` prints (Bottlerocket's apiclient sources):
the body and a newline on stdout with exit 0, or one `Failed ... Status ...` line on stderr with
exit 1; usage and configuration errors exit 2.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.contract.update_api.emulated_host import EmulatedHost, emulator_command

# A command held far longer than any test: the host's reboot, not its end, releases the lock.
HELD_SECONDS = "3600"


@pytest.fixture
def host(tmp_path: Path) -> EmulatedHost:
    return EmulatedHost(tmp_path, current="1.0.0", offered="1.1.0")


def _emulator(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BRUPOP_SIM_")}
    return subprocess.run(
        [*emulator_command(), *args],
        env={**clean, **env},
        capture_output=True,
        timeout=30,
        check=False,
    )


def test_os_prints_the_release_json_and_a_newline(host: EmulatedHost) -> None:
    result = host.raw("raw", "-u", "/os")

    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.endswith(b"}\n") and result.stdout.count(b"\n") == 1
    assert json.loads(result.stdout) == {
        "pretty_name": "Bottlerocket OS 1.0.0 (aws-k8s-1.30)",
        "variant_id": "aws-k8s-1.30",
        "version_id": "1.0.0",
        "build_id": json.loads(result.stdout)["build_id"],
        "arch": "x86_64",
    }


def test_status_before_the_first_refresh_is_404_with_apiclients_exact_text(
    host: EmulatedHost,
) -> None:
    result = host.raw("raw", "-u", "/updates/status")

    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr == (
        b"Failed GET request to '/updates/status': Status 404 when GETing /updates/status: "
        b"Update status is uninitialized, refresh-updates to initialize it\n"
    )


def test_an_accepted_command_is_204_with_no_output_and_status_is_423_meanwhile(
    host: EmulatedHost,
) -> None:
    host.set_env(BRUPOP_SIM_REFRESH_SECONDS=HELD_SECONDS)  # held until the reboot below

    posted = host.raw("raw", "-u", "/actions/refresh-updates", "-m", "POST")
    try:
        locked = host.raw("raw", "--uri", "/updates/status")
        again = host.raw("raw", "--uri", "/actions/refresh-updates", "--method", "POST")
    finally:
        host.raw("raw", "-u", "/actions/reboot", "-m", "POST")  # the command dies with the host

    assert (posted.returncode, posted.stdout, posted.stderr) == (0, b"", b"")
    assert locked.returncode == 1
    assert locked.stderr == (
        b"Failed GET request to '/updates/status': Status 423 when GETing /updates/status: "
        b"Unable to obtain shared lock for reading update status: "
        b"Resource temporarily unavailable (os error 11)\n"
    )
    assert again.stderr == (
        b"Failed POST request to '/actions/refresh-updates': "
        b"Status 423 when POSTing /actions/refresh-updates: Update lock held\n"
    )


def test_a_command_the_state_refuses_is_409(host: EmulatedHost) -> None:
    result = host.raw("raw", "-u", "/actions/activate-update", "-m", "POST")

    assert result.returncode == 1
    assert result.stderr == (
        b"Failed POST request to '/actions/activate-update': "
        b"Status 409 when POSTing /actions/activate-update: "
        b"Update action not allowed according to update state\n"
    )


def test_unknown_paths_are_404_and_wrong_methods_405(host: EmulatedHost) -> None:
    unknown = host.raw("raw", "-u", "/nope")
    wrong = host.raw("raw", "-u", "/actions/reboot")

    assert unknown.stderr == b"Failed GET request to '/nope': Status 404 when GETing /nope: \n"
    assert wrong.stderr.startswith(b"Failed GET request to '/actions/reboot': Status 405 ")
    assert host.adapter().os_info().version_id == "1.0.0"
    assert host.report()["reboots"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), b"Missing required argument '--uri'"),
        (("raw", "-u"), b"Did not give argument to -u | --uri"),
        (("raw", "-u", "/os", "--data", "{}"), b"Unknown argument '--data'"),
    ],
)
def test_usage_errors_exit_2_with_a_message(
    host: EmulatedHost, args: tuple[str, ...], message: bytes
) -> None:
    result = host.raw(*args)

    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.startswith(message + b"\n")


def test_a_missing_host_dir_is_a_one_line_error_exit_2() -> None:
    result = _emulator({}, "raw", "-u", "/os")

    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.count(b"\n") == 1
    assert b"BRUPOP_SIM_HOST_DIR is not set" in result.stderr


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("BRUPOP_SIM_CURRENT_VERSION", "one"),
        ("BRUPOP_SIM_PREPARE_SECONDS", "-1"),
        ("BRUPOP_SIM_FAULT_LOCK_STUCK", "maybe"),
        ("BRUPOP_SIM_REBOOT_KILLS", "everyone"),
    ],
)
def test_a_bad_variable_is_named_in_a_one_line_error(
    tmp_path: Path, variable: str, value: str
) -> None:
    result = _emulator({"BRUPOP_SIM_HOST_DIR": str(tmp_path), variable: value}, "-u", "/os")

    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.startswith(f"brupop-host-emulator: {variable}: ".encode())
    assert result.stderr.count(b"\n") == 1


def test_the_host_dir_is_seeded_once_from_the_environment(tmp_path: Path) -> None:
    first = {"BRUPOP_SIM_HOST_DIR": str(tmp_path / "h"), "BRUPOP_SIM_CURRENT_VERSION": "1.2.3"}
    later = {**first, "BRUPOP_SIM_CURRENT_VERSION": "9.9.9"}

    assert json.loads(_emulator(first, "-u", "/os").stdout)["version_id"] == "1.2.3"
    assert json.loads(_emulator(later, "-u", "/os").stdout)["version_id"] == "1.2.3"


def test_the_host_log_names_the_node_and_never_touches_stdout(host: EmulatedHost) -> None:
    host.adapter().refresh_updates()

    lines = [json.loads(line) for line in (host.dir / "host.log").read_text().splitlines()]

    assert {line["node"] for line in lines} == {"node-under-test"}
    assert [line["event"] for line in lines] == ["command.started", "command.finished"]

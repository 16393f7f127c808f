"""The host's update state machine, as the emulator applies it (thar-be-updates' rules)."""

from __future__ import annotations

import pytest

from brupop.hostsim import commands
from brupop.hostsim.store import HostState


def _host(offered: str | None = "1.1.0") -> HostState:
    state = HostState(node_name="n", version_id="1.0.0", offered_version=offered)
    state.update_status = commands.initial_status(state)
    return state


def _status(state: HostState) -> dict[str, object]:
    assert state.update_status is not None
    return state.update_status


@pytest.mark.parametrize(
    ("command", "state", "refused"),
    [
        ("refresh", "Ready", None),
        ("prepare", "Idle", 409),
        ("activate", "Available", 409),
        ("deactivate", "Staged", 409),
    ],
)
def test_commands_are_allowed_only_in_their_states(
    command: str, state: str, refused: int | None
) -> None:
    status = {**_status(_host()), "update_state": state}

    answer = commands.refusal(command, status)

    assert (answer[0] if answer else None) == refused


def test_a_whole_update_moves_through_every_state_and_boots_the_new_version() -> None:
    host = _host()
    seen = []
    for command in ("refresh", "prepare", "activate"):
        assert commands.refusal(command, _status(host)) is None
        commands.finish(command, host, failed=False)
        seen.append(_status(host)["update_state"])

    commands.boot(host)

    assert seen == ["Available", "Staged", "Ready"]
    assert (host.version_id, host.other_version, host.reboots) == ("1.1.0", "1.0.0", 1)
    assert host.update_status is None


def test_deactivate_makes_the_next_boot_keep_the_running_version() -> None:
    host = _host()
    for command in ("refresh", "prepare", "activate", "deactivate"):
        commands.finish(command, host, failed=False)

    commands.boot(host)

    assert host.version_id == "1.0.0"


def test_a_failed_refresh_records_failure_and_goes_idle() -> None:
    host = _host()
    commands.finish("refresh", host, failed=False)

    commands.finish("refresh", host, failed=True)

    status = _status(host)
    assert status["update_state"] == "Idle"
    record = status["most_recent_command"]
    assert isinstance(record, dict)
    assert (record["cmd_type"], record["cmd_status"], record["exit_status"]) == (
        "refresh",
        "Failed",
        1,
    )
    assert str(record["timestamp"]).endswith("Z")

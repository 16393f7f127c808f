"""Host models read `/os` and `/updates/status` as Bottlerocket really emits them."""

from dataclasses import replace

from brupop.domain.host.host import (
    CommandStatus,
    CommandType,
    HostUpdateState,
    HostUpdateStatus,
    OsInfo,
)
from brupop.domain.timestamps import parse_rfc3339
from tests.support.updates_status import updates_status_body

FULL_STATUS = {
    **updates_status_body(running="1.19.2", chosen="1.20.0", variant="aws-k8s-1.29"),
    "some_future_field": {"ignored": True},
}


def test_full_status_parses() -> None:
    status = HostUpdateStatus.from_json(FULL_STATUS)
    assert status.update_state is HostUpdateState.AVAILABLE
    assert status.chosen_version() == "1.20.0"
    assert status.most_recent_command is not None
    assert status.most_recent_command.cmd_type is CommandType.REFRESH


def test_most_recent_command_may_be_null_before_any_command() -> None:
    status = HostUpdateStatus.from_json({**FULL_STATUS, "most_recent_command": None})
    assert status.most_recent_command is None


def test_exit_status_and_stderr_may_be_null() -> None:
    command = {"cmd_type": "prepare", "cmd_status": "Unknown", "timestamp": None}
    command |= {"exit_status": None, "stderr": None}
    status = HostUpdateStatus.from_json({**FULL_STATUS, "most_recent_command": command})
    assert status.most_recent_command is not None
    assert status.most_recent_command.exit_status is None
    assert status.most_recent_command.cmd_status is CommandStatus.UNKNOWN


def test_deactivate_and_unknown_command_types_parse() -> None:
    for wire, expected in [
        ("deactivate", CommandType.DEACTIVATE),
        ("frobnicate", CommandType.UNKNOWN),
    ]:
        command = {**FULL_STATUS["most_recent_command"], "cmd_type": wire}
        status = HostUpdateStatus.from_json({**FULL_STATUS, "most_recent_command": command})
        assert status.most_recent_command is not None
        assert status.most_recent_command.cmd_type is expected


def test_unknown_update_state_is_kept_as_unknown() -> None:
    status = HostUpdateStatus.from_json({**FULL_STATUS, "update_state": "Rolling"})
    assert status.update_state is HostUpdateState.UNKNOWN


def test_success_check_needs_matching_type_and_success_and_recent_enough() -> None:
    status = HostUpdateStatus.from_json(FULL_STATUS)
    command = status.most_recent_command
    assert command is not None
    before = parse_rfc3339("2026-01-05T09:59:00Z")
    after = parse_rfc3339("2026-01-05T10:01:00Z")
    assert command.succeeded(CommandType.REFRESH, not_before=before)
    assert not command.succeeded(CommandType.PREPARE, not_before=before)
    assert not command.succeeded(CommandType.REFRESH, not_before=after)
    failed = replace(command, cmd_status=CommandStatus.FAILED)
    assert not failed.succeeded(CommandType.REFRESH, not_before=before)


def test_os_info_ignores_extra_fields() -> None:
    info = OsInfo.from_json(
        {"version_id": "1.19.2", "pretty_name": "Bottlerocket OS 1.19.2", "new": 1}
    )
    assert info.version_id == "1.19.2"

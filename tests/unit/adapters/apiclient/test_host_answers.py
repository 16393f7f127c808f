"""The update API's table agrees with the host emulator's and the fake's own rules."""

from __future__ import annotations

import pytest

from brupop.adapters.apiclient.host_answers import (
    COMMAND_RULES,
    Refusal,
    refusal,
    wait_budget,
)
from brupop.domain.host.host import CommandType, HostUpdateState
from brupop.hostsim import commands

_STATES = [s for s in HostUpdateState if s is not HostUpdateState.UNKNOWN]


def test_each_status_code_has_its_meaning() -> None:
    assert [refusal(code) for code in (404, 409, 423, 500, 502)] == [
        Refusal.NOTHING_THERE,
        Refusal.NOT_IN_THIS_STATE,
        Refusal.LOCK_HELD,
        Refusal.FAILED,
        Refusal.FAILED,
    ]


def test_the_wait_budgets_are_apiclients_unless_the_agent_allows_less() -> None:
    budgets = {command: wait_budget(command, 600) for command in COMMAND_RULES}
    assert budgets == {
        CommandType.REFRESH: 10,
        CommandType.PREPARE: 600,
        CommandType.ACTIVATE: 5,
        CommandType.DEACTIVATE: 5,
    }
    assert wait_budget(CommandType.PREPARE, 30) == 30


@pytest.mark.parametrize("command", list(COMMAND_RULES))
@pytest.mark.parametrize("state", _STATES)
def test_the_emulator_refuses_with_409_exactly_where_the_table_does_not_allow(
    command: CommandType, state: HostUpdateState
) -> None:
    status = {
        "update_state": state.value,
        "chosen_update": commands.image("1.1.0"),
        "staging_partition": {"image": commands.image("1.1.0"), "next_to_boot": False},
    }
    refused = commands.refusal(command.value, status)
    allowed = state in COMMAND_RULES[command].allowed_in
    assert (refused is not None and refused[0] == 409) is not allowed

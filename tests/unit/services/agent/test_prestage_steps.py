"""Preparing ahead leaves the host Staged without touching the node; unstaging takes back an
activation that was not followed by a reboot."""

from __future__ import annotations

import pytest

from brupop.domain.errors import VersionMismatchError
from brupop.domain.host.agent_steps import staged_version
from brupop.domain.host.host import HostUpdateState
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.stop import StopFlag
from brupop.services.agent.update_steps import UpdateSteps
from tests.fakes.clock import FakeClock
from tests.fakes.node_operations import FakeNodeOperations
from tests.fakes.update_api import FakeUpdateApi
from tests.support.agent_rig import RecordedLog


def _steps(host: FakeUpdateApi) -> tuple[UpdateSteps, FakeNodeOperations, RecordedLog]:
    node, log = FakeNodeOperations(), RecordedLog()
    steps = UpdateSteps(host, node, FakeClock(), AgentConfig(), StopFlag(), log)
    return steps, node, log


def test_preparing_ahead_stages_the_version_without_activating_or_touching_the_node() -> None:
    host = FakeUpdateApi("1.0.0", "1.1.0")
    steps, node, _ = _steps(host)

    held = steps.prepare_ahead("1.1.0")

    assert host.state is HostUpdateState.STAGED
    assert staged_version(held) == "1.1.0"
    assert "activate_update" not in host.calls
    assert node.calls == []


def test_a_host_already_holding_the_version_is_not_asked_again() -> None:
    host = FakeUpdateApi("1.0.0", "1.1.0")
    steps, _, _ = _steps(host)
    steps.prepare_ahead("1.1.0")
    host.calls.clear()

    steps.prepare_ahead("1.1.0")

    assert host.calls == ["update_status"]


def test_a_staged_node_in_its_turn_only_activates() -> None:
    host = FakeUpdateApi("1.0.0", "1.1.0")
    steps, _, _ = _steps(host)
    steps.prepare_ahead("1.1.0")
    host.calls.clear()

    steps.stage("1.1.0")

    assert host.calls == ["update_status", "activate_update"]
    assert host.state is HostUpdateState.READY


def test_preparing_ahead_an_activated_host_takes_the_activation_back() -> None:
    host = FakeUpdateApi("1.0.0", "1.1.0")
    steps, _, _ = _steps(host)
    steps.stage("1.1.0")

    steps.prepare_ahead("1.1.0")

    assert host.state is HostUpdateState.STAGED


def test_preparing_ahead_a_version_the_host_does_not_choose_is_refused() -> None:
    host = FakeUpdateApi("1.0.0", "1.2.0")
    steps, _, _ = _steps(host)

    with pytest.raises(VersionMismatchError):
        steps.prepare_ahead("1.1.0")
    assert "prepare_update" not in host.calls


def test_unstaging_deactivates_a_ready_host_and_says_so() -> None:
    host = FakeUpdateApi("1.0.0", "1.1.0")
    steps, _, log = _steps(host)
    steps.stage("1.1.0")

    held = steps.unstage()

    assert host.state is HostUpdateState.STAGED
    assert staged_version(held) == "1.1.0"
    (line,) = log.events("update.unstaged")
    assert line.fields["version"] == "1.1.0"


def test_unstaging_a_host_that_is_not_ready_changes_nothing() -> None:
    host = FakeUpdateApi("1.0.0", "1.1.0")
    steps, _, log = _steps(host)
    steps.prepare_ahead("1.1.0")
    host.calls.clear()

    steps.unstage()

    assert host.calls == ["update_status"]
    assert log.events("update.unstaged") == []

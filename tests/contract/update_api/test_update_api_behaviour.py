"""How a Bottlerocket host behaves behind the UpdateApi port, checked on the fake and on the
real adapter driving the emulator: the fake agent tests rely on cannot drift from the real one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from brupop.domain.host.host import CommandStatus, CommandType, HostUpdateState, HostUpdateStatus
from brupop.ports.agent.update_api import UpdateApi
from brupop.ports.errors import HostCommandFailedError, HostRejectedError
from tests.contract.update_api.conftest import MakeHost


def _staged(api: UpdateApi) -> HostUpdateStatus:
    api.refresh_updates()
    return api.prepare_update()


def test_update_status_is_absent_until_the_first_command(make_host: MakeHost) -> None:
    host = make_host("1.0.0", "1.1.0")

    assert host.api.update_status() is None
    assert host.api.os_info().version_id == "1.0.0"


def test_refresh_without_an_offer_leaves_the_host_idle(make_host: MakeHost) -> None:
    api = make_host("1.0.0", None).api

    status = api.refresh_updates()

    assert status.update_state is HostUpdateState.IDLE
    assert status.chosen_update is None
    assert status.most_recent_command is not None
    assert status.most_recent_command.cmd_type is CommandType.REFRESH
    assert status.most_recent_command.cmd_status is CommandStatus.SUCCESS


def test_refresh_with_a_newer_offer_chooses_it(make_host: MakeHost) -> None:
    api = make_host("1.0.0", "1.1.0").api
    before = datetime.now(UTC)

    status = api.refresh_updates()

    assert status.update_state is HostUpdateState.AVAILABLE
    assert status.chosen_version() == "1.1.0"
    assert status.available_updates == ["1.1.0", "1.0.0"]
    assert status.active_partition is not None and status.active_partition.image is not None
    assert status.active_partition.image.version == "1.0.0"
    record = status.most_recent_command
    assert record is not None and record.timestamp is not None
    assert record.timestamp >= before - timedelta(seconds=1)
    assert api.update_status() == status


@pytest.mark.parametrize("offered", ["1.0.0", "0.9.9", "1.0.0-rc.1"])
def test_an_offer_not_newer_than_the_running_version_is_not_chosen(
    make_host: MakeHost, offered: str
) -> None:
    status = make_host("1.0.0", offered).api.refresh_updates()

    assert status.update_state is HostUpdateState.IDLE
    assert status.chosen_update is None


def test_a_new_offer_is_seen_only_at_the_next_refresh(make_host: MakeHost) -> None:
    host = make_host("1.0.0", "1.1.0")
    host.api.refresh_updates()

    host.offer("1.2.0")
    status = host.api.update_status()
    assert status is not None and status.chosen_version() == "1.1.0"

    assert host.api.refresh_updates().chosen_version() == "1.2.0"


def test_prepare_stages_the_chosen_version(make_host: MakeHost) -> None:
    api = make_host("1.0.0", "1.1.0").api

    status = _staged(api)

    assert status.update_state is HostUpdateState.STAGED
    assert status.staging_partition is not None and status.staging_partition.image is not None
    assert status.staging_partition.image.version == "1.1.0"
    assert status.staging_partition.next_to_boot is False
    assert status.most_recent_command is not None
    assert status.most_recent_command.cmd_type is CommandType.PREPARE


def test_full_update_boots_the_new_version_and_forgets_the_status(make_host: MakeHost) -> None:
    api = make_host("1.0.0", "1.1.0").api
    _staged(api)

    ready = api.activate_update()
    assert ready.update_state is HostUpdateState.READY
    assert ready.staging_partition is not None and ready.staging_partition.next_to_boot
    assert ready.active_partition is not None and not ready.active_partition.next_to_boot

    api.reboot()

    assert api.os_info().version_id == "1.1.0"
    assert api.update_status() is None
    after = api.refresh_updates()
    assert after.update_state is HostUpdateState.IDLE
    assert after.chosen_update is None


def test_reboot_of_a_host_not_ready_boots_the_same_version(make_host: MakeHost) -> None:
    api = make_host("1.0.0", "1.1.0").api
    _staged(api)

    api.reboot()

    assert api.os_info().version_id == "1.0.0"
    assert api.update_status() is None


def test_deactivate_undoes_activation_so_a_reboot_keeps_the_version(make_host: MakeHost) -> None:
    api = make_host("1.0.0", "1.1.0").api
    _staged(api)
    api.activate_update()

    status = api.deactivate_update()

    assert status.update_state is HostUpdateState.STAGED
    assert status.staging_partition is not None and not status.staging_partition.next_to_boot
    api.reboot()
    assert api.os_info().version_id == "1.0.0"


def test_prepare_before_any_refresh_is_refused_and_initialises_the_status(
    make_host: MakeHost,
) -> None:
    api = make_host("1.0.0", "1.1.0").api

    with pytest.raises(HostRejectedError) as refused:
        api.prepare_update()

    assert refused.value.status == 409
    status = api.update_status()
    assert status is not None
    assert status.update_state is HostUpdateState.IDLE
    assert status.most_recent_command is None


@pytest.mark.parametrize("command", ["activate_update", "deactivate_update"])
def test_commands_the_state_does_not_allow_are_refused_with_409(
    make_host: MakeHost, command: str
) -> None:
    api = make_host("1.0.0", "1.1.0").api
    api.refresh_updates()

    with pytest.raises(HostRejectedError) as refused:
        getattr(api, command)()

    assert refused.value.status == 409
    status = api.update_status()
    assert status is not None and status.update_state is HostUpdateState.AVAILABLE


def test_prepare_without_a_chosen_update_is_refused_with_404(make_host: MakeHost) -> None:
    host = make_host("1.0.0", "1.1.0")
    _staged(host.api)
    host.offer(None)
    refreshed = host.api.refresh_updates()
    assert refreshed.update_state is HostUpdateState.STAGED  # refresh keeps a staged host staged
    assert refreshed.chosen_update is None

    with pytest.raises(HostRejectedError) as refused:
        host.api.prepare_update()

    assert refused.value.status == 404


def test_a_failed_refresh_raises_and_leaves_the_host_idle(make_host: MakeHost) -> None:
    host = make_host("1.0.0", "1.1.0")
    host.api.refresh_updates()
    host.make_fail("refresh")

    with pytest.raises(HostCommandFailedError):
        host.api.refresh_updates()

    status = host.api.update_status()
    assert status is not None
    assert status.update_state is HostUpdateState.IDLE
    assert status.most_recent_command is not None
    assert status.most_recent_command.cmd_type is CommandType.REFRESH
    assert status.most_recent_command.cmd_status is CommandStatus.FAILED


def test_a_failed_prepare_raises_and_keeps_the_update_available(make_host: MakeHost) -> None:
    host = make_host("1.0.0", "1.1.0")
    host.api.refresh_updates()
    host.make_fail("prepare")

    with pytest.raises(HostCommandFailedError):
        host.api.prepare_update()

    status = host.api.update_status()
    assert status is not None
    assert status.update_state is HostUpdateState.AVAILABLE
    assert status.staging_partition is None
    assert status.most_recent_command is not None
    assert status.most_recent_command.cmd_status is CommandStatus.FAILED

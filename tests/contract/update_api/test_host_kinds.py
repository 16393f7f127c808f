"""Each kind of host answers the same through the fake and through apiclient over the emulator."""

from __future__ import annotations

import pytest

from brupop.domain.boot_mode import BootMode
from brupop.domain.host.host import HostUpdateState
from brupop.domain.host_kind import HostKind
from brupop.ports.errors import HostRejectedError
from tests.contract.update_api.conftest import MakeHost


def test_an_updatable_host_says_so_and_offers_its_update(make_host: MakeHost) -> None:
    host = make_host(offered="1.1.0")
    assert host.api.host_class().kind is HostKind.UPDATABLE
    assert host.api.refresh_updates().chosen_version() == "1.1.0"


def test_a_locked_down_host_refuses_settings_but_still_stages_through_the_update_api(
    make_host: MakeHost,
) -> None:
    host = make_host(offered="1.1.0", kind="lockdown")
    found = host.api.host_class()
    assert found.kind is HostKind.LOCKED_DOWN
    assert "500" in found.note
    host.api.refresh_updates()
    host.api.prepare_update()
    assert host.api.activate_update().update_state is HostUpdateState.READY


def test_a_variant_without_in_place_updates_says_so_and_its_commands_answer_500(
    make_host: MakeHost,
) -> None:
    host = make_host(offered="1.1.0", kind="no-updates")
    assert host.api.host_class().kind is HostKind.NO_IN_PLACE_UPDATES
    with pytest.raises(HostRejectedError) as refused:
        host.api.refresh_updates()
    assert refused.value.status == 500
    assert host.api.update_status() is None


def test_an_end_of_life_variant_is_updatable_but_never_offered_anything(
    make_host: MakeHost,
) -> None:
    host = make_host(offered="1.1.0", kind="eol")
    assert host.api.host_class().kind is HostKind.UPDATABLE
    assert host.api.refresh_updates().chosen_version() is None
    assert host.api.os_info().variant_id != make_host().api.os_info().variant_id


def test_a_standard_host_reports_the_standard_boot_mode(make_host: MakeHost) -> None:
    assert make_host().api.boot_mode() is BootMode.STANDARD


def test_a_fips_host_reports_the_fips_boot_mode_before_and_after_a_reboot(
    make_host: MakeHost,
) -> None:
    host = make_host(offered="1.1.0", kind="fips")
    assert host.api.boot_mode() is BootMode.FIPS
    host.api.reboot()
    assert host.api.boot_mode() is BootMode.FIPS


def test_a_host_that_loses_fips_reports_the_standard_mode_after_its_reboot(
    make_host: MakeHost,
) -> None:
    host = make_host(offered="1.1.0", kind="fips-lost")
    assert host.api.boot_mode() is BootMode.FIPS
    host.api.reboot()
    assert host.api.boot_mode() is BootMode.STANDARD


def test_a_host_answering_the_settings_read_unlike_bottlerocket_is_an_unexpected_answer(
    make_host: MakeHost,
) -> None:
    found = make_host(offered="1.1.0", kind="unexpected").api.host_class()
    assert found.kind is HostKind.UNEXPECTED_ANSWER
    assert "403" in found.note

"""The agent reads its host's kind at start and after a reboot, reports it, and never asks a host
that cannot update in place to look for updates."""

from __future__ import annotations

from brupop.domain.host_kind import HostKind
from brupop.domain.states import UpdateState
from brupop.ports.errors import HostUnavailableError
from brupop.services.agent.outcomes import Next
from tests.fakes.update_api import FakeUpdateApi
from tests.support.agent_rig import make_rig


def test_an_updatable_host_is_reported_as_such_with_its_variant() -> None:
    rig = make_rig(current="1.0.0", offered="1.1.0")

    rig.agent.tick()

    status = rig.store.status
    assert status is not None
    assert (status.host_kind, status.variant) == (HostKind.UPDATABLE, "aws-k8s-1.30")
    assert status.target_version == "1.1.0"


def test_a_host_without_in_place_updates_is_reported_idle_and_never_asked_to_refresh() -> None:
    rig = make_rig(host=FakeUpdateApi("1.0.0", "1.1.0", kind="no-updates", variant="aws-dev"))

    for _ in range(3):
        assert rig.agent.tick() is Next.WAIT_FOR_CHANGE
        rig.clock.advance(300)

    status = rig.store.status
    assert status is not None
    assert status.host_kind is HostKind.NO_IN_PLACE_UPDATES
    assert status.host_note == "no settings.updates"
    assert (status.current_state, status.target_version) == (UpdateState.IDLE, "1.0.0")
    assert "refresh_updates" not in rig.host.calls
    assert not rig.log.events("update_check.failed")


def test_a_locked_down_host_is_reported_and_still_checks_for_updates() -> None:
    rig = make_rig(host=FakeUpdateApi("1.0.0", "1.1.0", kind="lockdown"))

    rig.agent.tick()

    status = rig.store.status
    assert status is not None
    assert status.host_kind is HostKind.LOCKED_DOWN
    assert status.target_version == "1.1.0"


def test_the_kind_is_read_once_while_the_host_runs_the_same_version() -> None:
    rig = make_rig()
    for _ in range(4):
        rig.agent.tick()
        rig.clock.advance(300)

    assert rig.host.calls.count("host_class") == 1


def test_the_kind_is_read_again_once_the_host_runs_another_version() -> None:
    rig = make_rig(current="1.0.0")
    rig.agent.tick()
    rig.host.current_version = "1.1.0"  # as after a reboot into the update

    rig.agent.tick()

    assert rig.host.calls.count("host_class") == 2


def test_a_kind_that_cannot_be_read_yet_is_retried_and_nothing_is_reported() -> None:
    rig = make_rig()
    rig.host.fail_next["host_class"] = HostUnavailableError("host API unreachable")

    assert rig.agent.tick() is Next.RETRY_LATER
    assert rig.store.status is None
    assert rig.agent.tick() is Next.WAIT_FOR_CHANGE
    assert rig.store.status is not None

"""The pure rules behind staging and rebooting: pinned versions, no repeated work."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.domain.errors import UnexpectedHostStateError, VersionMismatchError
from brupop.domain.host.agent_steps import (
    StagingStep,
    check_ready_to_reboot,
    next_staging_step,
    same_version,
)
from brupop.domain.host.host import HostUpdateState, HostUpdateStatus, Partition, UpdateImage

VERSIONS = st.sampled_from(["1.0.0", "1.1.0", "1.1.0+build.7", "1.2.0", "2.0.0-rc.1"])
STATES = st.sampled_from(list(HostUpdateState))


def _host(state: HostUpdateState, chosen: str | None, staged: str | None) -> HostUpdateStatus:
    return HostUpdateStatus(
        update_state=state,
        chosen_update=UpdateImage(version=chosen) if chosen else None,
        staging_partition=Partition(image=UpdateImage(version=staged)) if staged else None,
    )


@given(STATES, st.none() | VERSIONS, st.none() | VERSIONS, VERSIONS, st.booleans())
def test_prepare_is_only_chosen_when_the_host_would_download_the_pinned_version(
    state: HostUpdateState, chosen: str | None, staged: str | None, wanted: str, refreshed: bool
) -> None:
    try:
        step = next_staging_step(_host(state, chosen, staged), wanted, refreshed=refreshed)
    except (UnexpectedHostStateError, VersionMismatchError):
        return
    if step is StagingStep.PREPARE:
        assert same_version(chosen, wanted)
    if step is None:
        assert state is HostUpdateState.READY and same_version(staged, wanted)
    if step is StagingStep.REFRESH:
        assert not refreshed


@given(STATES, st.none() | VERSIONS, st.none() | VERSIONS, VERSIONS)
def test_staging_refreshes_first_unless_the_host_already_holds_the_pinned_version(
    state: HostUpdateState, chosen: str | None, staged: str | None, wanted: str
) -> None:
    step = next_staging_step(_host(state, chosen, staged), wanted, refreshed=False)

    holds = state in (HostUpdateState.STAGED, HostUpdateState.READY) and same_version(
        staged, wanted
    )
    assert (step is StagingStep.REFRESH) is not holds


@given(STATES, st.none() | VERSIONS, VERSIONS)
def test_reboot_is_allowed_only_when_ready_for_exactly_the_pinned_version(
    state: HostUpdateState, staged: str | None, wanted: str
) -> None:
    host = _host(state, None, staged)
    allowed = state is HostUpdateState.READY and same_version(staged, wanted)
    if allowed:
        check_ready_to_reboot(host, wanted)
    else:
        with pytest.raises((UnexpectedHostStateError, VersionMismatchError)):
            check_ready_to_reboot(host, wanted)


def test_uninitialised_host_status_earns_one_refresh_then_fails() -> None:
    assert next_staging_step(None, "1.1.0", refreshed=False) is StagingStep.REFRESH
    with pytest.raises(UnexpectedHostStateError):
        next_staging_step(None, "1.1.0", refreshed=True)


def test_build_metadata_does_not_make_versions_differ() -> None:
    assert same_version("1.1.0", "1.1.0+build.7")
    assert not same_version("1.1.0", "1.1.1")
    assert not same_version(None, "1.1.0")

"""The agent's host-side decisions: which update command comes next, and whether a reboot may.

Pure rules over the host's `/updates/status`. They pin the update to the version the controller
asked for, checked against a fresh refresh of the host's offer (the original prepared whatever
the host had chosen, however stale), and never redo work the host has already done (the
original failed forever once a host was Ready): section 10 bugs 3 and 4.
"""

from __future__ import annotations

from enum import StrEnum

from brupop.domain.errors import UnexpectedHostStateError, VersionMismatchError
from brupop.domain.host.host import HostUpdateState, HostUpdateStatus
from brupop.domain.versions import compare_versions, is_version


class StagingStep(StrEnum):
    """One host command on the way to `StagedAndPerformedUpdate`."""

    REFRESH = "refresh"
    DEACTIVATE = "deactivate"
    PREPARE = "prepare"
    ACTIVATE = "activate"


def same_version(left: str | None, right: str | None) -> bool:
    """Both versions are known and equal (by semver precedence when both are semver)."""
    if left is None or right is None:
        return False
    if left == right:
        return True
    return is_version(left) and is_version(right) and compare_versions(left, right) == 0


def staged_version(host: HostUpdateStatus | None) -> str | None:
    """The version in the host's staging partition, if any."""
    if host is None or host.staging_partition is None or host.staging_partition.image is None:
        return None
    return host.staging_partition.image.version


def _describe(host: HostUpdateStatus | None) -> str:
    return "uninitialised" if host is None else str(host.update_state)


def holds_version(host: HostUpdateStatus | None, version: str) -> bool:
    """The host has already staged (or staged and activated) exactly `version`."""
    if host is None or host.update_state not in (HostUpdateState.STAGED, HostUpdateState.READY):
        return False
    return same_version(staged_version(host), version)


def next_staging_step(
    host: HostUpdateStatus | None, version: str, *, refreshed: bool
) -> StagingStep | None:
    """The next command that brings the host to Ready for `version`; None when it already is.

    `refreshed` says whether the host has looked for updates during this action. Staging starts
    with a refresh unless the host already holds `version`, so the pinned version is checked
    against the host's current offer, not one that a newer release may have replaced since.
    """
    if not refreshed and not holds_version(host, version):
        return StagingStep.REFRESH
    state = host.update_state if host is not None else None
    if host is None or state is HostUpdateState.IDLE:
        raise UnexpectedHostStateError(
            f"the host offers no update (state {_describe(host)}); "
            f"the controller asked for {version}"
        )
    staged = staged_version(host)
    if state is HostUpdateState.READY:
        return None if same_version(staged, version) else StagingStep.DEACTIVATE
    if state is HostUpdateState.STAGED and same_version(staged, version):
        return StagingStep.ACTIVATE
    if state in (HostUpdateState.AVAILABLE, HostUpdateState.STAGED):
        chosen = host.chosen_version()
        if same_version(chosen, version):
            return StagingStep.PREPARE
        raise VersionMismatchError(
            f"the host's chosen update is {chosen or 'none'}, "
            f"but the controller asked for {version}"
        )
    raise UnexpectedHostStateError(
        f"the host's update state is {_describe(host)}; expected Available, Staged or Ready"
    )


def check_ready_to_reboot(host: HostUpdateStatus | None, version: str) -> None:
    """Raise unless the host is Ready to boot exactly `version`."""
    if host is None or host.update_state is not HostUpdateState.READY:
        raise UnexpectedHostStateError(
            f"the host's update state is {_describe(host)}, not Ready: nothing to boot into"
        )
    staged = staged_version(host)
    if not same_version(staged, version):
        raise VersionMismatchError(
            f"the host is Ready to boot {staged or 'an unknown version'}, "
            f"but the controller asked for {version}"
        )

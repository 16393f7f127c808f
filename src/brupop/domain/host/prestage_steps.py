"""The agent's rules for preparing an update ahead of its turn, and for taking an activation back.

A prestaged host holds the new image in its staging partition (Staged) and never boots it by
accident: activation waits for the node's turn. A host that was activated (Ready) but not
rebooted when the fleet stopped is deactivated (Ready -> Staged), so an unplanned reboot brings
back the version it runs. Pure rules over the host's `/updates/status`.
"""

from __future__ import annotations

from brupop.domain.errors import UnexpectedHostStateError, VersionMismatchError
from brupop.domain.host.agent_shadow import AgentShadowStatus
from brupop.domain.host.agent_steps import StagingStep, holds_version, same_version, staged_version
from brupop.domain.host.host import HostUpdateState, HostUpdateStatus
from brupop.domain.value_objects import replace

HeldUpdate = tuple[str | None, HostUpdateState | None]
"""The version in the host's staging partition and its state (Staged or Ready), or (None, None)."""

_HELD = (HostUpdateState.STAGED, HostUpdateState.READY)


def next_prestage_step(
    host: HostUpdateStatus | None, version: str, *, refreshed: bool
) -> StagingStep | None:
    """The next command that leaves the host Staged with `version` (never Ready); None when
    it already is. Starts with a refresh unless the host already holds `version`."""
    if host is not None and holds_version(host, version):
        return StagingStep.DEACTIVATE if host.update_state is HostUpdateState.READY else None
    if not refreshed:
        return StagingStep.REFRESH
    if host is None or host.update_state is HostUpdateState.IDLE:
        raise UnexpectedHostStateError(f"the host offers no update; asked to prepare {version}")
    if host.update_state is HostUpdateState.READY:
        return StagingStep.DEACTIVATE
    if host.update_state in (HostUpdateState.AVAILABLE, HostUpdateState.STAGED):
        chosen = host.chosen_version()
        if same_version(chosen, version):
            return StagingStep.PREPARE
        raise VersionMismatchError(
            f"the host's chosen update is {chosen or 'none'}, but {version} was to be prepared"
        )
    raise UnexpectedHostStateError(
        f"the host's update state is {host.update_state}; expected Available, Staged or Ready"
    )


def held_update(host: HostUpdateStatus | None) -> HeldUpdate:
    """The version the host holds in its staging partition and whether it is Staged or Ready;
    (None, None) when it holds none."""
    if host is None or host.update_state not in _HELD:
        return None, None
    version = staged_version(host)
    return (version, host.update_state) if version is not None else (None, None)


def is_activated(host: HostUpdateStatus | None) -> bool:
    """The host would boot its staged image at the next reboot (Ready)."""
    return host is not None and host.update_state is HostUpdateState.READY


def with_held_update(
    status: AgentShadowStatus, previous: AgentShadowStatus | None, held: HeldUpdate | None
) -> AgentShadowStatus:
    """`status` saying what the host holds: as last seen (`held`), else as reported before;
    nothing once the node runs that version (it rebooted into it)."""
    if held is not None:
        version, state = held[0], (None if held[1] is None else held[1].value)
    elif previous is not None:
        version, state = previous.staged_version, previous.staged_state
    else:
        version, state = None, None
    if version is None or version == status.current_version:
        version, state = None, None
    return replace(status, staged_version=version, staged_state=state)

"""Withdrawal: the nodes whose update the fleet no longer wants, before they reboot into it.

When the fleet is paused or halted, or a pin falls below the version a node is on its way to,
a node staging, activated or draining (not yet rebooted) is sent back to Idle, so that its
agent takes the activation back (Ready -> Staged) and an unplanned reboot boots the version it
runs. A node that has rebooted finishes as before. Pure.
"""

from __future__ import annotations

from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.domain.versions import compare_versions, is_version

_IN_FLIGHT = {
    # spec state: the status states in which the node has not rebooted yet
    UpdateState.STAGED_AND_PERFORMED_UPDATE: (
        UpdateState.IDLE,
        UpdateState.STAGED_AND_PERFORMED_UPDATE,
    ),
    UpdateState.REBOOTED_INTO_UPDATE: (UpdateState.STAGED_AND_PERFORMED_UPDATE,),
}


def is_withdrawn(shadow: Shadow, *, stopped: bool, pin: str | None) -> bool:
    """`shadow`'s update is in flight, not rebooted into, and no longer wanted."""
    status, spec = shadow.status, shadow.spec
    if status is None or spec.version is None:
        return False
    if status.current_state not in _IN_FLIGHT.get(spec.state, ()):
        return False
    if status.current_version == spec.version:
        return False
    pinned_below = (
        pin is not None
        and is_version(pin)
        and is_version(spec.version)
        and compare_versions(spec.version, pin) > 0
    )
    return stopped or pinned_below

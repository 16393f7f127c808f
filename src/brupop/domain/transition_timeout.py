"""Transition timeouts: how long a node may take to reach the state the controller asked for.

The clock starts at `spec.state_transition_timestamp`, which the controller stamps whenever it
changes the spec. The limits are the original's per-state values (which it never enforced).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from brupop.domain.shadow import Shadow
from brupop.domain.states import StateTimeouts, UpdateState


def transition_deadline(shadow: Shadow, timeouts: StateTimeouts) -> datetime | None:
    """When the node's current transition times out; None when it is not in one, has no
    limit, or has just reported a failure (the controller answers that at once)."""
    status, spec = shadow.status, shadow.spec
    if status is None or status.current_state == spec.state:
        return None
    if status.current_state is UpdateState.ERROR_RESET and spec.state is not UpdateState.IDLE:
        return None
    limit = timeouts.for_state(spec.state)
    if limit is None or spec.state_transition_timestamp is None:
        return None
    return spec.state_transition_timestamp + timedelta(seconds=limit)


def is_timed_out(shadow: Shadow, now: datetime, timeouts: StateTimeouts) -> bool:
    """The node has been in its transition longer than that state allows."""
    deadline = transition_deadline(shadow, timeouts)
    return deadline is not None and now > deadline

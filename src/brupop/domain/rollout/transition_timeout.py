"""Transition timeouts: how long a node may take to reach the state the controller asked for.

The clock starts at `spec.state_transition_timestamp`, which the controller stamps whenever it
changes the spec. The limits are the original's per-state values (which it never enforced).

A timeout counts a failed update attempt, so a node the controller sent back to Idle because of
a failure that is already counted (the agent reported ErrorReset, or an earlier timeout was
recorded) has no deadline: nothing is being attempted until its agent brings it back, and an
agent that stays down must not earn one more crash per limit.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from brupop.domain.shadow import Shadow
from brupop.domain.states import StateTimeouts, UpdateState
from brupop.domain.timestamps import later


def transition_deadline(shadow: Shadow, timeouts: StateTimeouts) -> datetime | None:
    """When the node's current transition times out; None when it is not in one, has no
    limit, or has just reported a failure (the controller answers that at once)."""
    status, spec = shadow.status, shadow.spec
    if status is None or status.current_state == spec.state:
        return None
    if status.current_state is UpdateState.ERROR_RESET and spec.state is not UpdateState.IDLE:
        return None
    if is_returning_after_failure(shadow):
        return None
    limit = timeouts.for_state(spec.state)
    if limit is None or spec.state_transition_timestamp is None:
        return None
    return later(spec.state_transition_timestamp, timedelta(seconds=limit))


def is_returning_after_failure(shadow: Shadow) -> bool:
    """Asked back to Idle after a failure that is already counted: the agent reported ErrorReset,
    or the controller recorded the failure when it sent the node back (it stamps the Idle spec
    with the failure's time, so a failure at or after the stamp is that one)."""
    status, spec = shadow.status, shadow.spec
    if status is None or spec.state is not UpdateState.IDLE:
        return False
    if status.current_state is UpdateState.ERROR_RESET:
        return True
    failed_at, stamped = status.state_transition_failure_timestamp, spec.state_transition_timestamp
    return failed_at is not None and stamped is not None and failed_at >= stamped


def is_timed_out(shadow: Shadow, now: datetime, timeouts: StateTimeouts) -> bool:
    """The node has been in its transition longer than that state allows."""
    deadline = transition_deadline(shadow, timeouts)
    return deadline is not None and now > deadline

"""The v2 update state machine: its states, the order they follow, and how long each may last."""

from __future__ import annotations

from enum import StrEnum

from brupop.domain.value_objects import value_object


class UpdateState(StrEnum):
    """A node's place in the update cycle; the values are the CRD v2 wire strings."""

    IDLE = "Idle"
    STAGED_AND_PERFORMED_UPDATE = "StagedAndPerformedUpdate"
    REBOOTED_INTO_UPDATE = "RebootedIntoUpdate"
    MONITORING_UPDATE = "MonitoringUpdate"
    ERROR_RESET = "ErrorReset"

    def on_success(self) -> UpdateState:
        """The state a node is asked to reach once it has reached this one."""
        return _ON_SUCCESS[self]


_ON_SUCCESS: dict[UpdateState, UpdateState] = {
    UpdateState.IDLE: UpdateState.STAGED_AND_PERFORMED_UPDATE,
    UpdateState.STAGED_AND_PERFORMED_UPDATE: UpdateState.REBOOTED_INTO_UPDATE,
    UpdateState.REBOOTED_INTO_UPDATE: UpdateState.MONITORING_UPDATE,
    UpdateState.MONITORING_UPDATE: UpdateState.IDLE,
    UpdateState.ERROR_RESET: UpdateState.IDLE,
}


@value_object
class StateTimeouts:
    """Seconds a node may take to reach each desired state; None means no limit.

    The defaults are the original's values (which it defined but never enforced).
    """

    idle: float | None = 120.0
    staged_and_performed_update: float | None = 720.0
    rebooted_into_update: float | None = 600.0
    monitoring_update: float | None = 300.0
    error_reset: float | None = None

    def for_state(self, state: UpdateState) -> float | None:
        """The limit for reaching `state`."""
        limit: float | None = getattr(self, _TIMEOUT_FIELD[state])
        return limit


_TIMEOUT_FIELD: dict[UpdateState, str] = {
    UpdateState.IDLE: "idle",
    UpdateState.STAGED_AND_PERFORMED_UPDATE: "staged_and_performed_update",
    UpdateState.REBOOTED_INTO_UPDATE: "rebooted_into_update",
    UpdateState.MONITORING_UPDATE: "monitoring_update",
    UpdateState.ERROR_RESET: "error_reset",
}

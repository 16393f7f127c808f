"""What the agent reports in its shadow's status, and how crash_count moves.

Pure: the service hands in what it observed (running version, the last update check) and the
time; these rules give the status to write.
"""

from __future__ import annotations

from datetime import datetime

from brupop.domain.boot_mode import BootMode
from brupop.domain.host.agent_shadow import AgentShadowStatus
from brupop.domain.host_kind import HostKind
from brupop.domain.shadow_names import CRASH_COUNT_MAX
from brupop.domain.states import UpdateState
from brupop.domain.value_objects import value_object
from brupop.domain.versions import is_version

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any


@value_object
class Observation:
    """The versions the agent saw on its host during one loop."""

    current_version: str
    target_version: str
    host_kind: HostKind | None = None
    host_note: str | None = None
    variant: str | None = None
    boot_mode: BootMode | None = None
    boot_mode_changed_from: BootMode | None = None

    def host_fields(self) -> dict[str, Any]:
        """The status fields that say what kind of host this is (None while unknown)."""
        return {
            "host_kind": self.host_kind,
            "host_note": self.host_note,
            "variant": self.variant,
            "boot_mode": self.boot_mode,
            "boot_mode_changed_from": self.boot_mode_changed_from,
        }


def target_version(
    current_version: str,
    chosen_version: str | None,
    checked: bool,
    previous: AgentShadowStatus | None,
) -> str:
    """The version the node should run.

    The last update check's chosen update when a check has succeeded (the running version when
    it chose none); before any check succeeded, the previously reported target; else the
    running version.
    """
    if checked:
        return chosen_version if chosen_version and is_version(chosen_version) else current_version
    if previous is not None:
        return previous.target_version
    return current_version


def initial_status(seen: Observation) -> AgentShadowStatus:
    """The first status of a new shadow: Idle, no crash."""
    return AgentShadowStatus(
        current_version=seen.current_version,
        target_version=seen.target_version,
        current_state=UpdateState.IDLE,
        **seen.host_fields(),
    )


def status_after_success(
    previous: AgentShadowStatus,
    reached: UpdateState,
    seen: Observation,
    asked_at: datetime | None = None,
) -> AgentShadowStatus:
    """The node reached `reached`, which the spec stamped `asked_at` asked for. The crash record
    is cleared once an update has been monitored back to Idle, and kept otherwise (the
    controller's backoff reads it). An Idle the controller asked for because the update failed
    in MonitoringUpdate (its health gate, or its timeout) is no finished update: the controller
    stamps that spec with the failure's own time, so the crash it recorded stays."""
    failed_in_monitoring = (
        asked_at is not None
        and previous.state_transition_failure_timestamp is not None
        and previous.state_transition_failure_timestamp >= asked_at
    )
    finished_update = (
        previous.current_state is UpdateState.MONITORING_UPDATE
        and reached is UpdateState.IDLE
        and not failed_in_monitoring
    )
    return AgentShadowStatus(
        current_version=seen.current_version,
        target_version=seen.target_version,
        current_state=reached,
        crash_count=0 if finished_update else previous.crash_count,
        state_transition_failure_timestamp=(
            None if finished_update else previous.state_transition_failure_timestamp
        ),
        **seen.host_fields(),
    )


def status_after_failure(
    previous: AgentShadowStatus, seen: Observation, now: datetime
) -> AgentShadowStatus:
    """An update step failed: ErrorReset, one more crash, failed at `now`."""
    return AgentShadowStatus(
        current_version=seen.current_version,
        target_version=seen.target_version,
        current_state=UpdateState.ERROR_RESET,
        crash_count=min(previous.crash_count + 1, CRASH_COUNT_MAX),
        state_transition_failure_timestamp=now,
        **seen.host_fields(),
    )


def status_refreshed(previous: AgentShadowStatus, seen: Observation) -> AgentShadowStatus:
    """Nothing to do: the same state and crash record with the versions seen now."""
    return AgentShadowStatus(
        current_version=seen.current_version,
        target_version=seen.target_version,
        current_state=previous.current_state,
        crash_count=previous.crash_count,
        state_transition_failure_timestamp=previous.state_transition_failure_timestamp,
        **seen.host_fields(),
    )

"""The BottlerocketUpdatePolicy status: the fleet's story, written by the leading controller.

Field names and bounds are the CRD's wire format (camelCase); the CRD's status schema is
generated from here. Reading is lenient (unknown fields ignored) so a newer controller's status
never makes an older one fail.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, Field, field_validator

from brupop.domain.policy.scheduling_policy import LABEL_KEY_MAX_LENGTH
from brupop.domain.policy.wire_format import STATUS_WIRE
from brupop.domain.shadow import Timestamp, parse_timestamp

MESSAGE_MAX_LENGTH = 1024
NAME_MAX_LENGTH = 253
COUNT_MAX = 2**31 - 1
DURATIONS_KEPT = 20  # the expected update time is learned from the last 20 nodes
DURATION_MAX_SECONDS = 7 * 86_400
VERSIONS_SEEN_MAX = 100
CANARIES_KEPT = 1000  # canary.count's most
VERSION_MAX_LENGTH = 64
BUDGET_GROUPS_MAX = 500
# A budget is named by its groupBy label key; a group by a label value (63 characters), or
# `(no <key>)` for the nodes without the label (budget_rule.group_of).
BUDGET_KEY_MAX_LENGTH = LABEL_KEY_MAX_LENGTH
BUDGET_GROUP_MAX_LENGTH = LABEL_KEY_MAX_LENGTH + len("(no )")
RESUMED_MESSAGE = (
    "Resumed: the halt was cleared; the controller says how the rollout stands on its next pass."
)


class PolicyPhase(StrEnum):
    """Where the fleet's rollout stands, as the PHASE column shows it."""

    IDLE = "Idle"
    ROLLING = "Rolling"
    PAUSED = "Paused"
    HALTED = "Halted"
    SOAKING = "Soaking"
    BLOCKED = "Blocked"


class HaltReason(BaseModel):
    """The failure that halted the fleet: which node, which check, and what was seen."""

    model_config = STATUS_WIRE

    node: str = Field(max_length=NAME_MAX_LENGTH)
    check: str = Field(max_length=NAME_MAX_LENGTH, description="e.g. nodeReady, httpProbe")
    detail: str = Field(default="", max_length=MESSAGE_MAX_LENGTH)


class CanaryProgress(BaseModel):
    """How far the canaries are: chosen, updated, and when their soak ends; by count, which
    nodes were chosen for which version (so a restarted controller keeps them)."""

    model_config = STATUS_WIRE

    nodes: int = Field(default=0, ge=0, le=COUNT_MAX, description="canary nodes chosen")
    updated: int = Field(default=0, ge=0, le=COUNT_MAX, description="Idle on the new version")
    soak_ends_at: Timestamp | None = None
    version: str | None = Field(
        default=None, max_length=VERSION_MAX_LENGTH, description="the version they update to"
    )
    chosen: tuple[Annotated[str, Field(max_length=NAME_MAX_LENGTH)], ...] = Field(
        default=(),
        max_length=CANARIES_KEPT,
        description="the canary nodes chosen by count (a restarted controller keeps them)",
    )

    _check_timestamp = field_validator("soak_ends_at", mode="before")(parse_timestamp)


class NodeCounts(BaseModel):
    """Opted-in nodes by the state their agent last reported."""

    model_config = STATUS_WIRE

    idle: int = Field(default=0, ge=0, le=COUNT_MAX)
    staged_and_performed_update: int = Field(default=0, ge=0, le=COUNT_MAX)
    rebooted_into_update: int = Field(default=0, ge=0, le=COUNT_MAX)
    monitoring_update: int = Field(default=0, ge=0, le=COUNT_MAX)
    error_reset: int = Field(default=0, ge=0, le=COUNT_MAX)


class VersionSeen(BaseModel):
    """When a host first offered `version` (the start of its release age)."""

    model_config = STATUS_WIRE

    version: str = Field(max_length=VERSION_MAX_LENGTH)
    at: Timestamp

    _check_timestamp = field_validator("at", mode="before")(parse_timestamp)


class BudgetUseStatus(BaseModel):
    """How many nodes of one budget's group are outside Idle, against its limit."""

    model_config = STATUS_WIRE

    budget: str = Field(max_length=BUDGET_KEY_MAX_LENGTH, description="the budget's groupBy key")
    group: str = Field(max_length=BUDGET_GROUP_MAX_LENGTH, description="the label's value")
    in_use: int = Field(default=0, ge=0, le=COUNT_MAX)
    limit: int = Field(default=1, ge=1, le=COUNT_MAX)


class UpdatePolicyStatus(BaseModel):
    """What the controller last concluded about the rollout under this policy."""

    model_config = STATUS_WIRE

    phase: PolicyPhase = PolicyPhase.IDLE
    message: str = Field(default="", max_length=MESSAGE_MAX_LENGTH)
    observed_generation: int | None = Field(default=None, ge=0)
    halted_at: Timestamp | None = None
    halt_reason: HaltReason | None = None
    failures: int = Field(
        default=0, ge=0, le=COUNT_MAX, description="nodes failed in the current rollout"
    )
    canary: CanaryProgress | None = None
    nodes: NodeCounts = Field(default_factory=NodeCounts)
    update_durations: tuple[Annotated[int, Field(ge=0, le=DURATION_MAX_SECONDS)], ...] = Field(
        default=(),
        max_length=DURATIONS_KEPT,
        description="seconds each of the last nodes took to update, newest last",
    )
    expected_update_seconds: int | None = Field(
        default=None,
        ge=0,
        le=DURATION_MAX_SECONDS,
        description="the 90th percentile of updateDurations (finishBy uses it)",
    )
    versions_first_seen: tuple[VersionSeen, ...] = Field(
        default=(), max_length=VERSIONS_SEEN_MAX, description="when a host first offered each"
    )
    budgets_in_use: tuple[BudgetUseStatus, ...] = Field(default=(), max_length=BUDGET_GROUPS_MAX)

    _check_timestamp = field_validator("halted_at", mode="before")(parse_timestamp)

    @property
    def halted(self) -> bool:
        """The fleet is halted: the phase says so, or a halt is still recorded."""
        return (
            self.phase is PolicyPhase.HALTED
            or self.halted_at is not None
            or self.halt_reason is not None
        )

    def resumed(self) -> UpdatePolicyStatus:
        """This status with its halt cleared, as `brupop resume` writes it: no halt, no failure
        counted in the current rollout, and the phase left for the controller to recompute."""
        return self.model_copy(
            update={
                "phase": PolicyPhase.IDLE,
                "message": RESUMED_MESSAGE,
                "halted_at": None,
                "halt_reason": None,
                "failures": 0,
            }
        )

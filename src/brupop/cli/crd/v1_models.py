"""The served-only v1 BottlerocketShadow, as models: the CRD's v1 schema is generated from them.

brupop reads and writes v2 only; v1 stays served so that old clients and v1-stored objects keep
working through the conversion webhook.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from brupop.domain.shadow import Timestamp, Version


class UpdateStateV1(StrEnum):
    """A node's place in the v1 update cycle (staging and performing were separate steps)."""

    IDLE = "Idle"
    STAGED_UPDATE = "StagedUpdate"
    PERFORMED_UPDATE = "PerformedUpdate"
    REBOOTED_INTO_UPDATE = "RebootedIntoUpdate"
    MONITORING_UPDATE = "MonitoringUpdate"


class ShadowSpecV1(BaseModel):
    """What the controller wants the node to reach next (v1)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    state: UpdateStateV1 = UpdateStateV1.IDLE
    state_transition_timestamp: Timestamp | None = None
    version: Version | None = None


class ShadowStatusV1(BaseModel):
    """What the agent last observed on its node (v1: no crash count)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    current_version: Version
    target_version: Version
    current_state: UpdateStateV1

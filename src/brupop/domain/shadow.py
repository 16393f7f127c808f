"""The BottlerocketShadow (v2): desired `spec` (controller) and observed `status` (agent).

Field names, types and patterns are the CRD v2 wire format, so the CRD is generated from here.
The agent reads the same format without pydantic (domain.host.agent_shadow).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    StringConstraints,
    field_validator,
)

from brupop.domain.boot_mode import BootMode
from brupop.domain.host_kind import (
    HOST_NOTE_MAX_LENGTH,
    VARIANT_MAX_LENGTH,
    HostKind,
)
from brupop.domain.shadow_names import (  # re-exported: the names' usual home
    API_GROUP,
    API_VERSION_V1,
    API_VERSION_V2,
    CRASH_COUNT_MAX,
    DEFAULT_NAMESPACE,
    KIND,
    OPT_IN_LABEL,
    OPT_IN_VALUE,
    SHADOW_NAME_PREFIX,
    shadow_name,
)
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import format_rfc3339, parse_rfc3339
from brupop.domain.versions import SEMVER_PATTERN

__all__ = [
    "API_GROUP",
    "API_VERSION_V1",
    "API_VERSION_V2",
    "CRASH_COUNT_MAX",
    "DEFAULT_NAMESPACE",
    "KIND",
    "OPT_IN_LABEL",
    "OPT_IN_VALUE",
    "SHADOW_NAME_PREFIX",
    "Shadow",
    "ShadowSpec",
    "ShadowStatus",
    "Timestamp",
    "Version",
    "parse_timestamp",
    "shadow_name",
]

Version = Annotated[str, StringConstraints(pattern=SEMVER_PATTERN)]
"""A Bottlerocket version as it travels on the wire, e.g. `1.19.2`."""

Timestamp = Annotated[datetime, PlainSerializer(format_rfc3339, return_type=str)]
"""An RFC 3339 instant, always written in UTC with `+00:00`."""


def parse_timestamp(value: Any) -> Any:
    """A field validator: RFC 3339 text to an aware datetime; naive datetimes are refused."""
    if isinstance(value, str):
        return parse_rfc3339(value)
    if isinstance(value, datetime) and value.tzinfo is None:
        raise ValueError("timestamps must carry a UTC offset")
    return value


def _unknown(value: object) -> bool:
    return value is None


class ShadowSpec(BaseModel):
    """What the controller wants the node to reach next."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    state: UpdateState = UpdateState.IDLE
    state_transition_timestamp: Timestamp | None = None
    version: Version | None = None
    # A version to prepare ahead of the node's turn (no cordon, no drain); left out: none.
    prestage_version: Version | None = Field(default=None, exclude_if=_unknown)

    _check_timestamp = field_validator("state_transition_timestamp", mode="before")(parse_timestamp)


class ShadowStatus(BaseModel):
    """What the agent last observed on its node."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    current_version: Version
    target_version: Version
    current_state: UpdateState
    crash_count: int = Field(default=0, ge=0, le=CRASH_COUNT_MAX)
    state_transition_failure_timestamp: Timestamp | None = None
    # The host's fields are written only once the agent has read them (older statuses stay).
    host_kind: HostKind | None = Field(default=None, exclude_if=_unknown)
    host_note: str | None = Field(
        default=None, max_length=HOST_NOTE_MAX_LENGTH, exclude_if=_unknown
    )
    variant: str | None = Field(default=None, max_length=VARIANT_MAX_LENGTH, exclude_if=_unknown)
    # What the host holds in its staging partition (prepared ahead, or activated): left out
    # while it holds nothing.
    staged_version: Version | None = Field(default=None, exclude_if=_unknown)
    staged_state: Literal["Staged", "Ready"] | None = Field(default=None, exclude_if=_unknown)
    # The host's boot mode (FIPS or not), and the one it ran before an update changed it:
    # left out while unknown, and while no update changed it.
    boot_mode: BootMode | None = Field(
        default=None, exclude_if=_unknown, description="The mode the host booted in."
    )
    boot_mode_changed_from: BootMode | None = Field(
        default=None,
        exclude_if=_unknown,
        description="The mode the host ran before an update changed it; the node is failed.",
    )

    _check_timestamp = field_validator("state_transition_failure_timestamp", mode="before")(
        parse_timestamp
    )


class Shadow(BaseModel):
    """One node's shadow with the metadata brupop relies on (owner node, resourceVersion)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str
    namespace: str
    node_name: str
    node_uid: str
    resource_version: str | None = None
    uid: str | None = None
    spec: ShadowSpec = Field(default_factory=ShadowSpec)
    status: ShadowStatus | None = None

    def has_crashed(self) -> bool:
        """The agent reports that its last action failed."""
        return self.status is not None and self.status.current_state is UpdateState.ERROR_RESET

"""The Bottlerocket host's answers (`/os`, `/updates/status`) as the host really emits them.

Nullable where Bottlerocket is nullable, unknown enum values kept as UNKNOWN, unknown fields
ignored, so a newer host never breaks the agent.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, field_validator

from brupop.domain.timestamps import TimestampError, parse_rfc3339


class _LenientEnum(StrEnum):
    """A wire enum that maps values it does not know to UNKNOWN instead of failing."""

    @classmethod
    def lenient(cls, value: Any) -> Any:
        if isinstance(value, cls):
            return value
        try:
            return cls(value)
        except ValueError:
            return cls("unknown-to-brupop")


class HostUpdateState(_LenientEnum):
    """The host's update pipeline state."""

    IDLE = "Idle"
    AVAILABLE = "Available"
    STAGED = "Staged"
    READY = "Ready"
    UNKNOWN = "unknown-to-brupop"


class CommandType(_LenientEnum):
    """Which update command the host ran last (kebab-case on the wire)."""

    REFRESH = "refresh"
    PREPARE = "prepare"
    ACTIVATE = "activate"
    DEACTIVATE = "deactivate"
    UNKNOWN = "unknown-to-brupop"


class CommandStatus(_LenientEnum):
    """How the host's last update command ended."""

    SUCCESS = "Success"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


def _lenient_timestamp(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    try:
        return parse_rfc3339(str(value))
    except TimestampError:
        return None


class _HostModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class OsInfo(_HostModel):
    """`GET /os`: only `version_id` matters to brupop."""

    version_id: str
    pretty_name: str | None = None
    variant_id: str | None = None
    build_id: str | None = None
    arch: str | None = None


class UpdateImage(_HostModel):
    """One Bottlerocket image the host knows of."""

    version: str
    arch: str | None = None
    variant: str | None = None


class Partition(_HostModel):
    """A boot partition and the image it holds."""

    image: UpdateImage | None = None
    next_to_boot: bool = False


class HostCommand(_HostModel):
    """The host's record of its most recent update command."""

    cmd_type: Annotated[CommandType, BeforeValidator(CommandType.lenient)]
    cmd_status: Annotated[CommandStatus, BeforeValidator(CommandStatus.lenient)]
    timestamp: Annotated[datetime | None, BeforeValidator(_lenient_timestamp)] = None
    exit_status: int | None = None
    stderr: str | None = None

    def finished(self, cmd_type: CommandType, *, not_before: datetime | None) -> bool:
        """This record is of `cmd_type` and no older than `not_before` (when both are known)."""
        if self.cmd_type is not cmd_type:
            return False
        if not_before is None or self.timestamp is None:
            return True
        return self.timestamp >= not_before

    def succeeded(self, cmd_type: CommandType, *, not_before: datetime | None) -> bool:
        """The command of `cmd_type` (recent enough) ran AND succeeded: both, never either."""
        return self.finished(cmd_type, not_before=not_before) and (
            self.cmd_status is CommandStatus.SUCCESS
        )


class HostUpdateStatus(_HostModel):
    """`GET /updates/status`."""

    update_state: Annotated[HostUpdateState, BeforeValidator(HostUpdateState.lenient)]
    available_updates: list[str] = []
    chosen_update: UpdateImage | None = None
    active_partition: Partition | None = None
    staging_partition: Partition | None = None
    most_recent_command: HostCommand | None = None

    @field_validator("available_updates", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    def chosen_version(self) -> str | None:
        """The version the host would prepare next, if any."""
        return self.chosen_update.version if self.chosen_update else None

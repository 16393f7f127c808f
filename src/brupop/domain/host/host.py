"""The Bottlerocket host's answers (`/os`, `/updates/status`) as the host really emits them.

Nullable where Bottlerocket is nullable, unknown enum values kept as UNKNOWN, unknown fields
ignored, so a newer host never breaks the agent. Frozen dataclasses read by hand (`from_json`):
the agent loads this module, and pydantic would cost it about 50 ms of CPU at each start.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum

from brupop.domain.host import wire_values as wire
from brupop.domain.timestamps import TimestampError, parse_rfc3339
from brupop.domain.value_objects import field, value_object

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any


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


_TRUE = ("1", "on", "t", "true", "y", "yes")
_FALSE = ("0", "off", "f", "false", "n", "no")


def _truth(document: Mapping[str, Any], key: str, default: bool) -> bool:
    """A boolean as hosts write it: true/false, 0/1, or their usual spellings as text."""
    value = document.get(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise wire.WireFormatError(f"{key}: expected a boolean, got {str(value)[:40]!r}")


def _count(document: Mapping[str, Any], key: str) -> int | None:
    """An optional integer: a JSON integer, an integral number, or an integer as text."""
    value = document.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isascii() and value.strip():
        try:
            return int(value)
        except ValueError:
            pass
    raise wire.WireFormatError(f"{key}: expected an integer, got {str(value)[:40]!r}")


def _nested(document: Mapping[str, Any], key: str, read: Any) -> Any:
    value = document.get(key)
    return None if value is None else read(value)


@value_object
class OsInfo:
    """`GET /os`: only `version_id` matters to brupop."""

    version_id: str
    pretty_name: str | None = None
    variant_id: str | None = None
    build_id: str | None = None
    arch: str | None = None

    @classmethod
    def from_json(cls, value: Any) -> OsInfo:
        document = wire.json_object(value, "os")
        return cls(
            version_id=wire.text(document, "version_id"),
            pretty_name=wire.optional_text(document, "pretty_name"),
            variant_id=wire.optional_text(document, "variant_id"),
            build_id=wire.optional_text(document, "build_id"),
            arch=wire.optional_text(document, "arch"),
        )


@value_object
class UpdateImage:
    """One Bottlerocket image the host knows of."""

    version: str
    arch: str | None = None
    variant: str | None = None

    @classmethod
    def from_json(cls, value: Any) -> UpdateImage:
        document = wire.json_object(value, "image")
        return cls(
            version=wire.text(document, "version"),
            arch=wire.optional_text(document, "arch"),
            variant=wire.optional_text(document, "variant"),
        )


@value_object
class Partition:
    """A boot partition and the image it holds."""

    image: UpdateImage | None = None
    next_to_boot: bool = False

    @classmethod
    def from_json(cls, value: Any) -> Partition:
        document = wire.json_object(value, "partition")
        return cls(
            image=_nested(document, "image", UpdateImage.from_json),
            next_to_boot=_truth(document, "next_to_boot", False),
        )


@value_object
class HostCommand:
    """The host's record of its most recent update command."""

    cmd_type: CommandType
    cmd_status: CommandStatus
    timestamp: datetime | None = None
    exit_status: int | None = None
    stderr: str | None = None

    @classmethod
    def from_json(cls, value: Any) -> HostCommand:
        document = wire.json_object(value, "most_recent_command")
        for key in ("cmd_type", "cmd_status"):
            if key not in document:
                raise wire.WireFormatError(f"{key}: required")
        return cls(
            cmd_type=CommandType.lenient(document["cmd_type"]),
            cmd_status=CommandStatus.lenient(document["cmd_status"]),
            timestamp=_lenient_timestamp(document.get("timestamp")),
            exit_status=_count(document, "exit_status"),
            stderr=wire.optional_text(document, "stderr"),
        )

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


@value_object
class HostUpdateStatus:
    """`GET /updates/status`."""

    update_state: HostUpdateState
    available_updates: list[str] = field(default_factory=list)
    chosen_update: UpdateImage | None = None
    active_partition: Partition | None = None
    staging_partition: Partition | None = None
    most_recent_command: HostCommand | None = None

    @classmethod
    def from_json(cls, value: Any) -> HostUpdateStatus:
        document = wire.json_object(value, "updates status")
        if "update_state" not in document:
            raise wire.WireFormatError("update_state: required")
        return cls(
            update_state=HostUpdateState.lenient(document["update_state"]),
            available_updates=_versions(document.get("available_updates")),
            chosen_update=_nested(document, "chosen_update", UpdateImage.from_json),
            active_partition=_nested(document, "active_partition", Partition.from_json),
            staging_partition=_nested(document, "staging_partition", Partition.from_json),
            most_recent_command=_nested(document, "most_recent_command", HostCommand.from_json),
        )

    def chosen_version(self) -> str | None:
        """The version the host would prepare next, if any."""
        return self.chosen_update.version if self.chosen_update else None


def _versions(value: Any) -> list[str]:
    """`available_updates`: a list of strings; null reads as none."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise wire.WireFormatError("available_updates: expected a list of strings")
    return list(value)

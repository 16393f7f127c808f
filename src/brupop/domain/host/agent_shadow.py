"""The agent's own shadow: the CRD v2 spec and status as frozen dataclasses, read and written
by hand.

The controller and the apiserver keep the pydantic models of `brupop.domain.shadow`, from
which the CRD is generated; the agent, which runs on every node under `cpu: 10m`, reads the
same wire format without loading pydantic (about 50 ms of CPU at each start). A contract
suite (tests/contract/shadow_models) feeds both the same JSON: whatever this module accepts,
the pydantic models accept as the same values, and whatever they refuse, it refuses. It is
stricter in one way only: it takes the JSON types the CRD declares, where pydantic's lax mode
also takes a number for a timestamp or a numeric string for a count.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from brupop.domain.boot_mode import BootMode
from brupop.domain.host import wire_values as wire
from brupop.domain.host_kind import HOST_NOTE_MAX_LENGTH, VARIANT_MAX_LENGTH, HostKind
from brupop.domain.shadow_names import CRASH_COUNT_MAX
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import format_rfc3339
from brupop.domain.value_objects import field, value_object
from brupop.domain.versions import SEMVER_PATTERN

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any

# Matched whole, as the CRD's (Rust) regex engine reads the pattern: its `$` is the very end of
# the text, where Python's `match` would also take a text ending in a newline.
_VERSION = re.compile(SEMVER_PATTERN)
_STAGED_STATES = (None, "Staged", "Ready")


def check_version(value: object, what: str) -> str:
    """`value` when it is a semantic version the CRD accepts; WireFormatError otherwise."""
    if not isinstance(value, str) or _VERSION.fullmatch(value) is None:
        raise wire.WireFormatError(f"{what}: not a semantic version: {str(value)[:80]!r}")
    return value


def _check_moment(value: datetime | None, what: str) -> None:
    if value is not None and (not isinstance(value, datetime) or value.tzinfo is None):
        raise wire.WireFormatError(f"{what}: timestamps must carry a UTC offset")


def _state(document: Mapping[str, Any], key: str, default: UpdateState | None) -> UpdateState:
    if key not in document and default is not None:
        return default
    value = wire.text(document, key)
    try:
        return UpdateState(value)
    except ValueError:
        raise wire.WireFormatError(f"{key}: not an update state: {value[:80]!r}") from None


def _check_length(value: str | None, what: str, longest: int) -> None:
    if value is not None and (not isinstance(value, str) or len(value) > longest):
        raise wire.WireFormatError(f"{what}: expected a string of at most {longest} characters")


def _host_kind(document: Mapping[str, Any]) -> HostKind | None:
    value = wire.optional_text(document, "host_kind")
    if value is None:
        return None
    try:
        return HostKind(value)
    except ValueError:
        raise wire.WireFormatError(f"host_kind: not a host kind: {value[:80]!r}") from None


@value_object
class AgentShadowSpec:
    """What the controller wants the node to reach next."""

    state: UpdateState = UpdateState.IDLE
    state_transition_timestamp: datetime | None = None
    version: str | None = None
    prestage_version: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.state, UpdateState):
            raise wire.WireFormatError("state: not an update state")
        _check_moment(self.state_transition_timestamp, "state_transition_timestamp")
        for name in ("version", "prestage_version"):
            if (value := getattr(self, name)) is not None:
                check_version(value, name)

    @classmethod
    def from_json(cls, value: Any) -> AgentShadowSpec:
        """The spec in a decoded JSON object; WireFormatError when it is not one."""
        document = wire.json_object(value, "spec")
        return cls(
            state=_state(document, "state", UpdateState.IDLE),
            state_transition_timestamp=wire.optional_timestamp(
                document, "state_transition_timestamp"
            ),
            version=wire.optional_text(document, "version"),
            prestage_version=wire.optional_text(document, "prestage_version"),
        )


@value_object
class AgentShadowStatus:
    """What the agent last observed on its node."""

    current_version: str
    target_version: str
    current_state: UpdateState
    crash_count: int = 0
    state_transition_failure_timestamp: datetime | None = None
    host_kind: HostKind | None = None
    host_note: str | None = None
    variant: str | None = None
    staged_version: str | None = None
    staged_state: str | None = None
    boot_mode: BootMode | None = None
    boot_mode_changed_from: BootMode | None = None

    def __post_init__(self) -> None:
        check_version(self.current_version, "current_version")
        check_version(self.target_version, "target_version")
        if not isinstance(self.current_state, UpdateState):
            raise wire.WireFormatError("current_state: not an update state")
        count = self.crash_count
        if isinstance(count, bool) or not isinstance(count, int):
            raise wire.WireFormatError("crash_count: expected an integer")
        if not 0 <= count <= CRASH_COUNT_MAX:
            raise wire.WireFormatError(f"crash_count: {count} is outside 0..{CRASH_COUNT_MAX}")
        _check_moment(self.state_transition_failure_timestamp, "state_transition_failure_timestamp")
        if self.host_kind is not None and not isinstance(self.host_kind, HostKind):
            raise wire.WireFormatError("host_kind: not a host kind")
        _check_length(self.host_note, "host_note", HOST_NOTE_MAX_LENGTH)
        _check_length(self.variant, "variant", VARIANT_MAX_LENGTH)
        if self.staged_version is not None:
            check_version(self.staged_version, "staged_version")
        if self.staged_state not in _STAGED_STATES:
            raise wire.WireFormatError("staged_state: expected Staged or Ready")
        for name in ("boot_mode", "boot_mode_changed_from"):
            if (mode := getattr(self, name)) is not None and not isinstance(mode, BootMode):
                raise wire.WireFormatError(f"{name}: not a boot mode")

    @classmethod
    def from_json(cls, value: Any) -> AgentShadowStatus:
        """The status in a decoded JSON object; WireFormatError when it is not one."""
        document = wire.json_object(value, "status")
        return cls(
            current_version=wire.text(document, "current_version"),
            target_version=wire.text(document, "target_version"),
            current_state=_state(document, "current_state", None),
            crash_count=wire.whole_number(document, "crash_count", 0),
            state_transition_failure_timestamp=wire.optional_timestamp(
                document, "state_transition_failure_timestamp"
            ),
            host_kind=_host_kind(document),
            host_note=wire.optional_text(document, "host_note"),
            variant=wire.optional_text(document, "variant"),
            staged_version=wire.optional_text(document, "staged_version"),
            staged_state=wire.optional_text(document, "staged_state"),
            boot_mode=_boot_mode(document, "boot_mode"),
            boot_mode_changed_from=_boot_mode(document, "boot_mode_changed_from"),
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON object the apiserver takes: timestamps in RFC 3339, UTC."""
        failed_at = self.state_transition_failure_timestamp
        return {
            "current_version": self.current_version,
            "target_version": self.target_version,
            "current_state": self.current_state.value,
            "crash_count": self.crash_count,
            "state_transition_failure_timestamp": (
                None if failed_at is None else format_rfc3339(failed_at)
            ),
        } | {
            name: value
            for name, value in (
                ("host_kind", None if self.host_kind is None else self.host_kind.value),
                ("host_note", self.host_note),
                ("variant", self.variant),
                ("staged_version", self.staged_version),
                ("staged_state", self.staged_state),
                ("boot_mode", _code(self.boot_mode)),
                ("boot_mode_changed_from", _code(self.boot_mode_changed_from)),
            )
            if value is not None
        }


@value_object
class AgentShadow:
    """This node's shadow with the metadata the agent relies on (owner node, resourceVersion)."""

    name: str
    namespace: str
    node_name: str
    node_uid: str
    resource_version: str | None = None
    uid: str | None = None
    spec: AgentShadowSpec = field(default_factory=AgentShadowSpec)
    status: AgentShadowStatus | None = None


def _code(mode: BootMode | None) -> str | None:
    return None if mode is None else mode.value


def _boot_mode(document: Mapping[str, Any], key: str) -> BootMode | None:
    value = wire.optional_text(document, key)
    if value is None:
        return None
    try:
        return BootMode(value)
    except ValueError:
        raise wire.WireFormatError(f"{key}: not a boot mode: {value[:80]!r}") from None

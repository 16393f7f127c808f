"""Reading fields out of decoded JSON by hand: the agent's models do it without pydantic.

Each reader takes the object and a key, checks the JSON type the wire format declares, and
raises `WireFormatError` (a ValueError) naming the field otherwise. Unknown keys are ignored;
a missing optional field and an explicit null read the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from brupop.domain.timestamps import parse_rfc3339

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any


class WireFormatError(ValueError):
    """A decoded JSON document does not have the shape a model declares."""


def json_object(value: Any, what: str) -> Mapping[str, Any]:
    """`value` when it is a JSON object; WireFormatError naming `what` otherwise."""
    if not isinstance(value, Mapping):
        raise WireFormatError(f"{what}: expected an object, got {type(value).__name__}")
    return value


def text(document: Mapping[str, Any], key: str) -> str:
    """A required string field."""
    if key not in document:
        raise WireFormatError(f"{key}: required")
    value = document[key]
    if not isinstance(value, str):
        raise WireFormatError(f"{key}: expected a string, got {type(value).__name__}")
    return value


def optional_text(document: Mapping[str, Any], key: str) -> str | None:
    """A string field that may be missing or null."""
    if document.get(key) is None:
        return None
    return text(document, key)


def whole_number(document: Mapping[str, Any], key: str, default: int) -> int:
    """An integer field (a JSON integer, not a boolean), `default` when missing."""
    if key not in document:
        return default
    value = document[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise WireFormatError(f"{key}: expected an integer, got {type(value).__name__}")
    return value


def flag(document: Mapping[str, Any], key: str, default: bool) -> bool:
    """A boolean field, `default` when missing."""
    value = document.get(key, default)
    if not isinstance(value, bool):
        raise WireFormatError(f"{key}: expected a boolean, got {type(value).__name__}")
    return value


def optional_timestamp(document: Mapping[str, Any], key: str) -> datetime | None:
    """An RFC 3339 string field (UTC-aware once read) that may be missing or null."""
    value = optional_text(document, key)
    return None if value is None else parse_rfc3339(value)

"""How the policy's models map to the CRD's wire format: camelCase names, frozen values.

The spec is strict (an unknown field fails the object, so a typo never passes silently); the
status is lenient (a newer controller's extra fields never make an older one fail to read it).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel


def wire_config(*, strict: bool) -> ConfigDict:
    """A pydantic model configuration for a CRD section, strict (spec) or lenient (status)."""
    return ConfigDict(
        frozen=True,
        extra="forbid" if strict else "ignore",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )


SPEC_WIRE = wire_config(strict=True)
STATUS_WIRE = wire_config(strict=False)


def bounded_int(default: int | None, least: int, most: int, description: str) -> Any:
    """A strict integer field of the spec, from `least` to `most` (the CRD's bounds)."""
    return Field(strict=True, default=default, ge=least, le=most, description=description)


def strict_bool(default: bool, description: str) -> Any:
    """A boolean field of the spec that takes only true or false (no 0, 1 or "yes")."""
    return Field(strict=True, default=default, description=description)


# The spec's deepest path (`alertGate.matchers[i]`, `drain.forceNamespaces[i]`) is 3 levels,
# the status' about 4: far deeper is no policy, and would take pydantic (its enums repr the
# input) and str() past Python's recursion limit.
NESTING_MAX = 32


def nests_deeper_than(value: object, limit: int = NESTING_MAX) -> bool:
    """`value` (decoded JSON) holds lists or objects more than `limit` levels deep. Walks
    with a stack of its own, so that any depth is measured without recursion."""
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list | tuple):
            if depth >= limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return False

"""How the policy's models map to the CRD's wire format: camelCase names, frozen values.

The spec is strict (an unknown field fails the object, so a typo never passes silently); the
status is lenient (a newer controller's extra fields never make an older one fail to read it).
"""

from __future__ import annotations

from pydantic import ConfigDict
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

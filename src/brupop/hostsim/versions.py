"""Semantic versions for the emulated host, stdlib only (the emulator must start fast).

Only what the host needs: validate a version and order two of them by semver precedence.
"""

from __future__ import annotations

import re

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


def is_version(text: str) -> bool:
    """True for `1.19.2`, `1.20.0-rc.1` and the like."""
    return _SEMVER.match(text) is not None


def newer(left: str, right: str) -> bool:
    """True when `left` has higher semver precedence than `right` (both must be versions)."""
    return _key(left) > _key(right)


def _key(version: str) -> tuple[tuple[int, int, int], int, tuple[tuple[int, int, str], ...]]:
    match = _SEMVER.match(version)
    if match is None:
        raise ValueError(f"not a semantic version: {version!r}")
    core = (int(match[1]), int(match[2]), int(match[3]))
    if match[4] is None:
        return core, 1, ()
    parts = tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in match[4].split(".")
    )
    return core, 0, parts

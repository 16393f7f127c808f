"""Semantic versions for the emulated host.

Validation is a stdlib regex, semver.org's own expression (as the CRD uses), because every call
checks its settings and the emulator must start fast. Ordering is the `semver` package's, the
same precedence brupop's domain uses, imported only by the commands that order versions.
"""

from __future__ import annotations

import re

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def is_version(text: str) -> bool:
    """True for `1.19.2`, `1.20.0-rc.1` and the like."""
    return _SEMVER.match(text) is not None


def newer(left: str, right: str) -> bool:
    """True when `left` has higher semver precedence than `right` (both must be versions)."""
    import semver  # imported here: it takes ~20 ms, which only a refresh should pay

    return semver.Version.parse(left).compare(right) > 0

"""The rollout a fleet is in: the highest version any agent is offered.

Halt counting and the canaries' soak are per this version. The controller keeps the offered
versions counted as shadows change (`RolloutBook.targets`), so `highest_version` costs the
distinct versions, not the fleet.
"""

from __future__ import annotations

from collections.abc import Iterable

from brupop.domain.versions import compare_versions


def highest_version(versions: Iterable[str]) -> str | None:
    """The highest of `versions` by semver (None when there is none)."""
    best: str | None = None
    for version in versions:
        if best is None or compare_versions(version, best) > 0:
            best = version
    return best

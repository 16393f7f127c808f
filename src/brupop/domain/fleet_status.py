"""The rollout a fleet is in: the highest version any agent is offered.

Halt counting and the canaries' soak are per this version. The controller keeps the offered
versions counted as shadows change (`RolloutBook.targets`), so `highest_version` costs the
distinct versions, not the fleet.
"""

from __future__ import annotations

from collections.abc import Iterable

from brupop.domain.shadow import Shadow
from brupop.domain.versions import compare_versions


def highest_version(versions: Iterable[str]) -> str | None:
    """The highest of `versions` by semver (None when there is none)."""
    best: str | None = None
    for version in versions:
        if best is None or compare_versions(version, best) > 0:
            best = version
    return best


def rollout_target(shadows: Iterable[Shadow]) -> str | None:
    """The highest version any agent is offered: the rollout the fleet is in (None when no
    agent has reported yet)."""
    return highest_version(s.status.target_version for s in shadows if s.status is not None)

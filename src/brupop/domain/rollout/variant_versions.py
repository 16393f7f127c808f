"""VariantVersions: the versions each variant's nodes run or are offered, kept one changed
shadow at a time, so the newest version per variant costs the distinct (variant, version)
pairs instead of a scan of the fleet on every pass that saw a change.

Nodes without a variant, or a status, count for nothing; a version that is not semver is
counted but never the newest.
"""

from __future__ import annotations

from collections import Counter

from brupop.domain.shadow import Shadow
from brupop.domain.versions import compare_versions, is_version


class VariantVersions:
    """How many nodes of each variant run or are offered each version."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str]] = Counter()

    def add(self, shadow: Shadow) -> None:
        """Count `shadow`'s current and offered versions under its variant."""
        for pair in _pairs(shadow):
            self._counts[pair] += 1

    def remove(self, shadow: Shadow) -> None:
        """Take back what `add` counted for `shadow`."""
        counts = self._counts
        for pair in _pairs(shadow):
            counts[pair] -= 1
            if counts[pair] <= 0:
                del counts[pair]

    def newest(self) -> dict[str, str]:
        """The newest version each variant's nodes run or are offered (variants with no
        readable version are left out)."""
        best: dict[str, str] = {}
        for variant, version in self._counts:
            if not is_version(version):
                continue
            held = best.get(variant)
            if held is None or compare_versions(version, held) > 0:
                best[variant] = version
        return best


def _pairs(shadow: Shadow) -> set[tuple[str, str]]:
    """(variant, version) for the versions `shadow` runs and is offered (one when equal)."""
    status = shadow.status
    if status is None or not status.variant:
        return set()
    variant = status.variant
    return {(variant, status.current_version), (variant, status.target_version)}

"""Variants left behind: a variant whose nodes see no offer while other variants' nodes run or
are offered a newer version. Updates never cross variants, so an end-of-life variant simply
stops being offered anything; after a grace period its nodes say so instead of "no update".

Pure: one pass's shadows and the time in, the variants behind (since when) out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from brupop.domain.shadow import Shadow
from brupop.domain.versions import compare_versions, is_version


@dataclass(frozen=True)
class VariantOffers:
    """Per variant, when it was first seen behind the fleet's newest version, and that version."""

    behind_since: Mapping[str, datetime] = field(default_factory=dict)
    newest: str | None = None

    def after(self, shadows: Iterable[Shadow], now: datetime) -> VariantOffers:
        """The record once this pass's shadows are seen at `now`."""
        best = _newest_per_variant(shadows)
        fleet = _newest(best.values())
        behind = {
            variant: self.behind_since.get(variant, now)
            for variant, version in best.items()
            if fleet is not None and compare_versions(version, fleet) < 0
        }
        return VariantOffers(behind, fleet)

    def left_behind(self, now: datetime, grace: timedelta) -> dict[str, str]:
        """The variants behind for at least `grace`, each with the sentence its nodes show."""
        return {
            variant: (
                f"no offer for variant {variant} while other variants run or are offered "
                f"{self.newest} (since {since.strftime('%Y-%m-%d %H:%M')} UTC)"
            )
            for variant, since in self.behind_since.items()
            if now - since >= grace
        }


def _newest_per_variant(shadows: Iterable[Shadow]) -> dict[str, str]:
    """The newest version each variant's nodes run or are offered (nodes without a variant or
    a readable version are left out)."""
    seen: dict[str, set[str]] = {}
    for shadow in shadows:
        status = shadow.status
        if status is None or not status.variant:
            continue
        seen.setdefault(status.variant, set()).update(
            v for v in (status.current_version, status.target_version) if is_version(v)
        )
    return {variant: n for variant, versions in seen.items() if (n := _newest(versions))}


def _newest(versions: Iterable[str]) -> str | None:
    newest: str | None = None
    for version in versions:
        if newest is None or compare_versions(version, newest) > 0:
            newest = version
    return newest

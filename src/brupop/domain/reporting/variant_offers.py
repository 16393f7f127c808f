"""Variants left behind: a variant whose nodes see no offer while other variants' nodes run or
are offered a newer version. Updates never cross variants, so an end-of-life variant simply
stops being offered anything; after a grace period its nodes say so instead of "no update".

Pure: the newest version per variant and the time in, the variants behind (since when) out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from brupop.domain.versions import compare_versions


@dataclass(frozen=True)
class VariantOffers:
    """Per variant, when it was first seen behind the fleet's newest version, and that version."""

    behind_since: Mapping[str, datetime] = field(default_factory=dict)
    newest: str | None = None

    def after(self, newest: Mapping[str, str], now: datetime) -> VariantOffers:
        """The record once the fleet is seen at `now`: `newest`, the newest version each
        variant's nodes run or are offered (`VariantVersions.newest`)."""
        fleet = _newest(newest.values())
        behind = {
            variant: self.behind_since.get(variant, now)
            for variant, version in newest.items()
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


def _newest(versions: Iterable[str]) -> str | None:
    newest: str | None = None
    for version in versions:
        if newest is None or compare_versions(version, newest) > 0:
            newest = version
    return newest

"""WriteJournal: the controller's own recent writes, to tell a stale list from a fresh one.

Deciding from a list that misses one of our own writes could start a node into a slot that is
already taken. Each write is remembered as (resourceVersion before, after); a list that still
shows a shadow at the *before* version has not caught up, and the pass re-lists instead.
Only equality of resourceVersions is used (they are opaque strings).
"""

from __future__ import annotations

from collections.abc import Iterable

from brupop.domain.shadow import Shadow


class WriteJournal:
    """Writes not yet seen in a list, by shadow name."""

    def __init__(self) -> None:
        self._before: dict[str, str | None] = {}

    def remember(self, name: str, before: str | None) -> None:
        """We just changed `name`, which was at resourceVersion `before`."""
        self._before[name] = before

    def is_stale(self, shadows: Iterable[Shadow]) -> bool:
        """The list still shows one of our writes undone; forget the writes it shows done."""
        listed = {shadow.name: shadow.resource_version for shadow in shadows}
        stale = False
        for name, before in list(self._before.items()):
            if name in listed and listed[name] == before:
                stale = True
            else:
                del self._before[name]
        return stale

    def names(self) -> list[str]:
        """The shadows with a write not yet seen."""
        return list(self._before)

    def forget(self) -> None:
        """Drop everything (e.g. after losing leadership)."""
        self._before.clear()

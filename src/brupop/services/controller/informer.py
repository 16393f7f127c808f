"""Informer: keeps a Mirror of one kind of object current from a list and a watch.

`relist()` fills (or repairs) the mirror from one list; `poll()` applies every change the
watch has ready without waiting, resuming from the last resourceVersion and re-listing when
that version expired (410 Gone). A background follower (`ChangeWatch`) uses `watch` and
`apply` instead, blocking on the stream. The controller decides from the mirror only, so a
pass costs what changed, not one list of the whole cluster.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from brupop.domain.cluster import Listing, WatchEvent
from brupop.ports.errors import WatchExpiredError
from brupop.services.controller.mirror import Mirror

T = TypeVar("T")

Lister = Callable[[], Listing[T]]
Watcher = Callable[[str | None, float], Iterator[WatchEvent[T]]]


class Informer(Generic[T]):
    """One kind of object: its list, its watch and the mirror they feed."""

    def __init__(self, kind: str, lister: Lister[T], watcher: Watcher[T], mirror: Mirror[T]):
        self.kind = kind
        self.mirror = mirror
        self._lister = lister
        self._watcher = watcher
        self._lock = threading.Lock()
        self._version: str | None = None
        self.relists = 0

    @property
    def version(self) -> str | None:
        """The resourceVersion to watch from (None until a first list)."""
        return self._version

    def relist(self, *, refresh: bool = False) -> str | None:
        """List everything and reconcile the mirror with it (`refresh`: replacing even the
        objects it holds at the listed version); the list's resourceVersion."""
        listing = self._lister()
        self.mirror.reconcile(listing.items, listing.resource_version, refresh=refresh)
        with self._lock:
            self._version = listing.resource_version
            self.relists += 1
        return listing.resource_version

    def poll(self) -> int:
        """Apply what the watch has ready now (a list first, or again after a 410); the
        number of changes that matter."""
        if self._version is None:
            self.relist()
            return 1
        changed = 0
        try:
            for event in self._watcher(self._version, 0.0):
                changed += self.apply(event)
        except WatchExpiredError:
            self.relist()
            changed += 1
        return changed

    def watch(self, version: str | None, timeout_seconds: float) -> Iterator[WatchEvent[T]]:
        """The raw watch, for a follower thread."""
        return self._watcher(version, timeout_seconds)

    def apply(self, event: WatchEvent[T]) -> bool:
        """One event into the mirror; remember its version to resume from."""
        if event.resource_version:
            with self._lock:
                self._version = event.resource_version
        return self.mirror.apply(event)

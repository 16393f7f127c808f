"""Informer: keeps a Mirror of one kind of object current from a list and a watch.

`relist()` fills (or repairs) the mirror from one list; once the mirror is filled, an informer
given a `VersionCheck` lists names and resourceVersions only and reads again just the objects
that differ (a resync of an unchanged fleet reads no object). `poll()` applies every change the
watch has ready without waiting, resuming from the last resourceVersion and re-listing when
that version expired (410 Gone). A background follower (`ChangeWatch`) uses `watch` and
`apply` instead, blocking on the stream. The controller decides from the mirror only, so a
pass costs what changed, not one list of the whole cluster.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from brupop.domain.cluster.objects import Listing, VersionListing, WatchBookmark, WatchEvent
from brupop.ports.errors import InvalidObjectError, NotFoundError, WatchExpiredError
from brupop.services.runtime.mirror import Mirror

T = TypeVar("T")

Lister = Callable[[], Listing[T]]
Watcher = Callable[[str | None, float], Iterator[WatchEvent[T] | WatchBookmark]]

MAX_READS_PER_CHECK = 100
"""Objects a version check reads again one by one; with more out of date, one full list costs
less (against Kubernetes, a request per object)."""


@dataclass(frozen=True)
class VersionCheck(Generic[T]):
    """How to resync a filled mirror cheaply: the list of versions, and a read of one object
    by name (None when it is not one the informer follows, such as a Node not opted in)."""

    list_versions: Callable[[], VersionListing]
    read: Callable[[str], T | None]


class Informer(Generic[T]):
    """One kind of object: its list, its watch and the mirror they feed."""

    def __init__(
        self,
        kind: str,
        lister: Lister[T],
        watcher: Watcher[T],
        mirror: Mirror[T],
        check: VersionCheck[T] | None = None,
    ):
        self.kind = kind
        self._check = check
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
        """List everything and reconcile the mirror with it; the list's resourceVersion. A
        filled mirror with a version check is compared by versions first, and only the
        objects that differ are read (all of them by one list when there are many).
        `refresh`: one full list replacing even the objects held at the listed version (what
        the mirror keeps of an object changed, e.g. a budget's new label key)."""
        check = self._check
        if check is not None and self.mirror.filled and not refresh:
            versions = check.list_versions()
            stale = self.mirror.reconcile_versions(versions)
            if len(stale) <= MAX_READS_PER_CHECK:
                for name in stale:
                    self._read_again(check, name, versions.resource_version)
                return self._listed(versions.resource_version)
        listing = self._lister()
        self.mirror.reconcile(listing.items, listing.resource_version, refresh=refresh)
        return self._listed(listing.resource_version)

    def _read_again(self, check: VersionCheck[T], name: str, list_version: str | None) -> None:
        """One object a version list showed out of date: held afresh, or dropped when gone
        (unless the mirror holds it newer than the list)."""
        try:
            obj = check.read(name)
        except (NotFoundError, InvalidObjectError):  # gone, or one a list skips as unreadable
            obj = None
        if obj is None:
            self.mirror.remove(name, list_version)
        else:
            self.mirror.put(obj)

    def _listed(self, version: str | None) -> str | None:
        with self._lock:
            self._version = version
            self.relists += 1
        return version

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

    def watch(
        self, version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[T] | WatchBookmark]:
        """The raw watch, for a follower thread."""
        return self._watcher(version, timeout_seconds)

    def apply(self, event: WatchEvent[T] | WatchBookmark) -> bool:
        """One event into the mirror, or a bookmark; remember its version to resume from."""
        if event.resource_version:
            with self._lock:
                self._version = event.resource_version
        return False if isinstance(event, WatchBookmark) else self.mirror.apply(event)

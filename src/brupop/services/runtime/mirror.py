"""Mirror: an informer's store, the copy of one kind of cluster object by name (shadows,
opted-in Nodes, policies, agent pods, service accounts).

It is filled by a list and kept current by watch events (and by the controller's own writes).
Each object keeps the newest resourceVersion seen: an event or a list older than what the
mirror holds is ignored, so a lagging list or a late event never takes a shadow back in time.
resourceVersions are compared as numbers when both are (as on every Kubernetes apiserver and
the in-memory cluster); otherwise anything different counts as newer. Objects that carry no
version (`version_of` gives None) are replaced by every put and removed by every delete. The
names of objects that changed in a way that matters are collected until the owner takes them.

The resourceVersions are also kept by name in a dict of their own: a resync compares them
with a list of versions only (`reconcile_versions`), one dict comparison done in C, and
reads full objects only for the names that differ. At 10k the objects no longer fit the
CPU's cache, and reading each one's name and version cost more per object than at 1k.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Container, Iterable
from typing import Generic, TypeVar

from brupop.domain.cluster.objects import VersionListing, WatchEvent, WatchEventType

T = TypeVar("T")


def _always(_old: object, _new: object) -> bool:
    return True


# Most objects are known by `name` and `resource_version`; read 20,000 times per resync at 10k
# objects, so by attrgetter, which runs in C where a Python function does not.
NAME_OF = operator.attrgetter("name")
RESOURCE_VERSION_OF = operator.attrgetter("resource_version")


def unversioned(_obj: object) -> None:
    """The `version_of` of objects that carry no version: each put replaces the one held."""
    return None


class Mirror(Generic[T]):
    """Objects by name, the newest version of each; thread-safe."""

    def __init__(  # `keep`: the part of each object worth holding (all of it when None)
        self,
        name_of: Callable[[T], str],
        version_of: Callable[[T], str | None],
        *,
        matters: Callable[[T | None, T | None], bool] = _always,
        keep: Callable[[T], T] | None = None,
    ) -> None:
        self._name_of = name_of
        self._version_of = version_of
        self._matters = matters
        self._keep = keep
        self._objects: dict[str, T] = {}
        self._versions: dict[str, str | None] = {}
        self._changed: set[str] = set()
        self._lock = threading.Lock()
        self.filled = False

    def __len__(self) -> int:
        return len(self._objects)

    def get(self, name: str) -> T | None:
        """The object `name`, or None when the mirror does not hold it."""
        return self._objects.get(name)

    def values(self) -> list[T]:
        """Every object held (a snapshot)."""
        with self._lock:
            return list(self._objects.values())

    def names(self) -> list[str]:
        """Every name held (a snapshot)."""
        with self._lock:
            return list(self._objects)

    def take_changes(self) -> set[str]:
        """Names changed since the last call (added, changed in a way that matters, or gone)."""
        with self._lock:
            changed, self._changed = self._changed, set()
            return changed

    def apply(self, event: WatchEvent[T]) -> bool:
        """Apply one watch event; True when it changed something that matters."""
        if event.type is WatchEventType.DELETED:
            return self.remove(self._name_of(event.object), event.resource_version)
        return self.put(event.object)

    def put(self, obj: T) -> bool:
        """Hold `obj` unless the mirror already holds that version or a newer one."""
        name, version = self._name_of(obj), self._version_of(obj)
        with self._lock:
            versions = self._versions
            if name in versions and not _newer(version, versions[name]):
                return False
            return self._hold(name, version, obj)

    def remove(self, name: str, version: str | None = None) -> bool:
        """Drop `name`, unless the mirror holds a version newer than `version`."""
        with self._lock:
            if name not in self._versions:
                return False
            held = self._versions[name]
            if version is not None and held is not None and _newer(held, version):
                return False
            return self._drop(name)

    def reconcile_versions(self, listing: VersionListing) -> list[str]:
        """Bring the mirror in line with a complete list of versions as far as it can without
        the objects: drop the held ones the list does not show (unless newer than it). The
        names to read again: listed with a newer version than held, or not held."""
        versions, held = listing.versions, self._versions
        with self._lock:
            if versions == held:  # the usual resync: one comparison, in C
                return []
            stale = [
                name
                for name, version in versions.items()
                if name not in held or _newer(version, held[name])
            ]
            self._drop_unlisted(versions.keys(), listing.resource_version)
            return stale

    def reconcile(
        self, items: Iterable[T], list_version: str | None, *, refresh: bool = False
    ) -> int:
        """Bring the mirror in line with a complete list taken at `list_version`: newer items
        replace held ones, held objects the list does not show are dropped unless they are
        newer than the list. `refresh`: items of the version held replace it too (what `keep`
        holds of an object changed). Returns how many names changed in a way that matters."""
        changed = 0
        listed: set[str] = set()
        name_of, version_of, versions = self._name_of, self._version_of, self._versions
        with self._lock:
            for obj in items:
                name, version = name_of(obj), version_of(obj)
                listed.add(name)
                if (
                    name not in versions
                    or _newer(version, versions[name])
                    or (refresh and version == versions[name])
                ):
                    changed += self._hold(name, version, obj)
            if len(versions) != len(listed):  # else every held name was listed: nothing to drop
                changed += self._drop_unlisted(listed, list_version)
        self.filled = True
        return changed

    def _drop_unlisted(self, listed: Container[str], list_version: str | None) -> int:
        """Drop the held objects a list did not show, unless they are newer than it."""
        changed = 0
        versions = self._versions
        for name in [n for n in versions if n not in listed]:
            held = versions[name]
            if list_version is None or held is None or not _newer(held, list_version):
                changed += self._drop(name)
        return changed

    def _hold(self, name: str, version: str | None, obj: T) -> bool:
        old = self._objects.get(name)
        obj = self._keep(obj) if self._keep is not None else obj
        self._objects[name] = obj
        self._versions[name] = version
        return self._note(name, old, obj)

    def _drop(self, name: str) -> bool:
        old = self._objects.pop(name)
        del self._versions[name]
        return self._note(name, old, None)

    def _note(self, name: str, old: T | None, new: T | None) -> bool:
        if self._matters(old, new):
            self._changed.add(name)
            return True
        return False


def _newer(candidate: str | None, held: str | None) -> bool:
    """`candidate` is a later resourceVersion than `held` (an object without one always is)."""
    if candidate is None:
        return True
    if candidate == held:
        return False
    if held is None:
        return True
    if candidate.isdigit() and held.isdigit():
        return int(candidate) > int(held)
    return True

"""Mirror: the controller's copy of one kind of cluster object (shadows, opted-in Nodes).

It is filled by a list and kept current by watch events and by the controller's own writes.
Each object keeps the newest resourceVersion seen: an event or a list older than what the
mirror holds is ignored, so a lagging list or a late event never takes a shadow back in time.
resourceVersions are compared as numbers when both are (as on every Kubernetes apiserver and
the in-memory cluster); otherwise anything different counts as newer. The names of objects
that changed in a way that matters are collected until the controller takes them.

Each name maps to a (resourceVersion, object) pair: a resync compares 10,000 versions, and
reading them from small tuples instead of from each held model keeps the walk over memory that
grows with the fleet as short as it can be (at 10k the objects no longer fit the CPU's cache).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from brupop.domain.cluster import WatchEvent, WatchEventType

T = TypeVar("T")
_Entry = tuple[str | None, T]


def _always(_old: object, _new: object) -> bool:
    return True


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
        self._entries: dict[str, _Entry[T]] = {}
        self._changed: set[str] = set()
        self._lock = threading.Lock()
        self.filled = False

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, name: str) -> T | None:
        """The object `name`, or None when the mirror does not hold it."""
        entry = self._entries.get(name)
        return None if entry is None else entry[1]

    def values(self) -> list[T]:
        """Every object held (a snapshot)."""
        with self._lock:
            return [entry[1] for entry in self._entries.values()]

    def names(self) -> list[str]:
        """Every name held (a snapshot)."""
        with self._lock:
            return list(self._entries)

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
            held = self._entries.get(name)
            if held is not None and not _newer(version, held[0]):
                return False
            obj = self._keep(obj) if self._keep is not None else obj
            self._entries[name] = (version, obj)
            return self._note(name, None if held is None else held[1], obj)

    def remove(self, name: str, version: str | None = None) -> bool:
        """Drop `name`, unless the mirror holds a version newer than `version`."""
        with self._lock:
            held = self._entries.get(name)
            if held is None:
                return False
            if version is not None and _newer(held[0], version):
                return False
            del self._entries[name]
            return self._note(name, held[1], None)

    def reconcile(
        self, items: Iterable[T], list_version: str | None, *, refresh: bool = False
    ) -> int:
        """Bring the mirror in line with a complete list taken at `list_version`: newer items
        replace held ones, held objects the list does not show are dropped unless they are
        newer than the list. `refresh`: items of the version held replace it too (what `keep`
        holds of an object changed). Returns how many names changed in a way that matters."""
        changed = 0
        listed: set[str] = set()
        name_of, version_of, entries, keep = (
            self._name_of,
            self._version_of,
            self._entries,
            self._keep,
        )
        with self._lock:
            for obj in items:
                name, version = name_of(obj), version_of(obj)
                listed.add(name)
                held = entries.get(name)
                if (
                    held is None
                    or (version != held[0] and _newer(version, held[0]))
                    or (refresh and version == held[0])
                ):
                    obj = keep(obj) if keep is not None else obj
                    entries[name] = (version, obj)
                    changed += self._note(name, None if held is None else held[1], obj)
            if len(entries) != len(listed):  # else every held name was listed: nothing to drop
                changed += self._drop_unlisted(listed, list_version)
        self.filled = True
        return changed

    def _drop_unlisted(self, listed: set[str], list_version: str | None) -> int:
        """Drop the held objects a list did not show, unless they are newer than it."""
        changed = 0
        entries = self._entries
        for name in [n for n in entries if n not in listed]:
            version, old = entries[name]
            if list_version is None or not _newer(version, list_version):
                del entries[name]
                changed += self._note(name, old, None)
        return changed

    def _note(self, name: str, old: T | None, new: T | None) -> bool:
        if self._matters(old, new):
            self._changed.add(name)
            return True
        return False


def _newer(candidate: str | None, held: str | None) -> bool:
    """`candidate` is a later resourceVersion than `held`."""
    if candidate == held:
        return False
    if candidate is None or held is None:
        return True
    if candidate.isdigit() and held.isdigit():
        return int(candidate) > int(held)
    return True

"""Mirror: the controller's copy of one kind of cluster object (shadows, opted-in Nodes).

It is filled by a list and kept current by watch events and by the controller's own writes.
Each object keeps the newest resourceVersion seen: an event or a list older than what the
mirror holds is ignored, so a lagging list or a late event never takes a shadow back in time.
resourceVersions are compared as numbers when both are (as on every Kubernetes apiserver and
the in-memory cluster); otherwise anything different counts as newer. The names of objects
that changed in a way that matters are collected until the controller takes them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from brupop.domain.cluster import WatchEvent, WatchEventType

T = TypeVar("T")


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
        self._objects: dict[str, T] = {}
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
        name = self._name_of(obj)
        with self._lock:
            old = self._objects.get(name)
            if old is not None and not _newer(self._version_of(obj), self._version_of(old)):
                return False
            obj = self._keep(obj) if self._keep is not None else obj
            self._objects[name] = obj
            return self._note(name, old, obj)

    def remove(self, name: str, version: str | None = None) -> bool:
        """Drop `name`, unless the mirror holds a version newer than `version`."""
        with self._lock:
            old = self._objects.get(name)
            if old is None:
                return False
            if version is not None and _newer(self._version_of(old), version):
                return False
            del self._objects[name]
            return self._note(name, old, None)

    def reconcile(self, items: Iterable[T], list_version: str | None) -> int:
        """Bring the mirror in line with a complete list taken at `list_version`: newer items
        replace held ones, held objects the list does not show are dropped unless they are
        newer than the list. Returns how many names changed in a way that matters."""
        changed = 0
        listed: set[str] = set()
        name_of, version_of, objects = self._name_of, self._version_of, self._objects
        with self._lock:
            for obj in items:
                name = name_of(obj)
                listed.add(name)
                old = objects.get(name)
                if old is None or _newer(version_of(obj), version_of(old)):
                    obj = self._keep(obj) if self._keep is not None else obj
                    objects[name] = obj
                    changed += self._note(name, old, obj)
            for name in [n for n in objects if n not in listed]:
                old = objects[name]
                if list_version is None or not _newer(version_of(old), list_version):
                    del objects[name]
                    changed += self._note(name, old, None)
        self.filled = True
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

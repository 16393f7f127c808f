"""A versioned, watchable object store: the heart of the in-memory cluster.

Every write takes the next cluster-wide resourceVersion and is appended to a bounded history,
so watches resume after a version and too-old versions expire (410), as in Kubernetes.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from brupop.adapters.memory.label_index import LabelIndex
from brupop.domain.cluster.objects import Listing, VersionListing, WatchEvent, WatchEventType
from brupop.ports.errors import AlreadyExistsError, ConflictError, NotFoundError, WatchExpiredError

T = TypeVar("T")


class Revisions:
    """The cluster-wide resourceVersion counter and the condition watchers wait on."""

    def __init__(self) -> None:
        self.condition = threading.Condition(threading.RLock())
        self._last = 0

    def next(self) -> int:
        with self.condition:
            self._last += 1
            return self._last

    @property
    def last(self) -> int:
        return self._last


class VersionedStore(Generic[T]):
    """Objects of one kind by key, with resourceVersions and a replayable change history."""

    def __init__(
        self,
        revisions: Revisions,
        kind: str,
        with_version: Callable[[T, str], T],
        version_of: Callable[[T], str | None],
        history: int = 2000,
        labels_of: Callable[[T], Mapping[str, str]] | None = None,
    ) -> None:
        self._revisions = revisions
        self._kind = kind
        self._with_version = with_version
        self._version_of = version_of
        self._objects: dict[str, T] = {}
        # Each object's resourceVersion (the same string object it carries), kept apart so a
        # list of versions is one copy of this dict, without reading 10,000 objects.
        self._versions: dict[str, str | None] = {}
        self._labels_of = labels_of  # when given, names and versions are indexed by label
        self._by_label = LabelIndex()
        self._history: deque[tuple[int, WatchEvent[T]]] = deque(maxlen=history)
        self._forgotten_before = 0

    @property
    def lock(self) -> threading.Condition:
        return self._revisions.condition

    def get(self, key: str) -> T:
        with self.lock:
            try:
                return self._objects[key]
            except KeyError:
                raise NotFoundError(f"{self._kind} {key!r} not found") from None

    def find(self, key: str) -> T | None:
        with self.lock:
            return self._objects.get(key)

    def list(self, keep: Callable[[T], bool] = lambda _: True) -> Listing[T]:
        with self.lock:
            items = tuple(obj for obj in self._objects.values() if keep(obj))
            return Listing(items=items, resource_version=str(self._revisions.last))

    def list_versions(self, label: tuple[str, str] | None = None) -> VersionListing:
        """Names and resourceVersions of every object, or of those carrying `label` (with
        `labels_of` given): a copy of a dict kept on each write, no object read."""
        with self.lock:
            versions = dict(self._versions) if label is None else self._by_label.versions(label)
            return VersionListing(versions, str(self._revisions.last))

    def values(self) -> builtins.list[T]:
        with self.lock:
            return list(self._objects.values())

    def create(self, key: str, obj: T) -> T:
        with self.lock:
            if key in self._objects:
                raise AlreadyExistsError(f"{self._kind} {key!r} already exists")
            return self._store(key, obj, WatchEventType.ADDED)

    def replace(self, key: str, obj: T, expected_version: str | None = None) -> T:
        with self.lock:
            current = self.get(key)
            if expected_version is not None and expected_version != self._version_of(current):
                raise ConflictError(
                    f"{self._kind} {key!r} is at resourceVersion {self._version_of(current)}, "
                    f"not {expected_version}"
                )
            return self._store(key, obj, WatchEventType.MODIFIED)

    def update(self, key: str, change: Callable[[T], T]) -> T:
        """Apply `change` to the current object atomically and store the result."""
        with self.lock:
            return self._store(key, change(self.get(key)), WatchEventType.MODIFIED)

    def delete(self, key: str) -> T:
        with self.lock:
            obj = self.get(key)
            del self._objects[key]
            del self._versions[key]
            self._relabel(key, obj, None)
            revision = self._revisions.next()
            gone = self._with_version(obj, str(revision))
            self._remember(revision, WatchEvent(WatchEventType.DELETED, gone, str(revision)))
            return gone

    def _store(self, key: str, obj: T, kind: WatchEventType) -> T:
        revision = self._revisions.next()
        stored = self._with_version(obj, str(revision))
        old = self._objects.get(key)
        self._objects[key] = stored
        self._versions[key] = self._version_of(stored)
        self._relabel(key, old, stored)
        self._remember(revision, WatchEvent(kind, stored, str(revision)))
        return stored

    def _relabel(self, key: str, old: T | None, new: T | None) -> None:
        labels_of = self._labels_of
        if labels_of is None:
            return
        if old is not None:
            self._by_label.dropped(key, labels_of(old))
        if new is not None:
            self._by_label.held(key, labels_of(new), self._version_of(new))

    def _remember(self, revision: int, event: WatchEvent[T]) -> None:
        if len(self._history) == self._history.maxlen:
            self._forgotten_before = self._history[0][0]
        self._history.append((revision, event))
        self.lock.notify_all()

    def watch(
        self,
        resource_version: str | None,
        timeout_seconds: float,
        keep: Callable[[T], bool] = lambda _: True,
    ) -> Iterator[WatchEvent[T]]:
        """Yield changes after `resource_version` (all objects as ADDED when None) until timeout."""
        deadline = time.monotonic() + max(timeout_seconds, 0.0)
        with self.lock:
            if resource_version is None:
                since = self._revisions.last
                pending: builtins.list[WatchEvent[T]] = [
                    WatchEvent(WatchEventType.ADDED, obj, self._version_of(obj))
                    for obj in self._objects.values()
                ]
            else:
                since = _parse_version(resource_version)
                if since < self._forgotten_before:
                    raise WatchExpiredError(f"resourceVersion {since} is too old")
                pending = []
        yield from (event for event in pending if keep(event.object))
        while True:
            with self.lock:
                if since < self._forgotten_before:
                    # Fallen behind what the history keeps: ended, as kube-apiserver ends such
                    # a watch with 410 Gone (the watcher lists again), never silently skipped.
                    raise WatchExpiredError(f"resourceVersion {since} is too old")
                fresh = self._after(since)
                if not fresh:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return
                    self.lock.wait(remaining)
                    continue
            since = fresh[-1][0]
            yield from (event for _, event in fresh if keep(event.object))

    def _after(self, since: int) -> builtins.list[tuple[int, WatchEvent[T]]]:
        """The remembered changes after revision `since`, oldest first.

        The history is in revision order, so it is read from the newest end and only as far
        as `since`: a watcher's wake-up costs the changes it gets, not the whole history."""
        fresh: builtins.list[tuple[int, WatchEvent[T]]] = []
        for revision, event in reversed(self._history):
            if revision <= since:
                break
            fresh.append((revision, event))
        fresh.reverse()
        return fresh


def _parse_version(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise WatchExpiredError(f"resourceVersion {text!r} is not one of this cluster's") from None

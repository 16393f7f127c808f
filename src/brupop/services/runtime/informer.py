"""Informer: keeps a store (a Mirror, by name) of one kind of cluster object current from a list
and a watch, the way every brupop process follows the cluster.

`relist()` fills (or repairs) the store from one list; once the store is filled, an informer
given a `VersionCheck` lists names and resourceVersions only and reads again just the objects
that differ (a resync of an unchanged fleet reads no object). `poll()` applies every change the
watch has ready without waiting. `start()` follows the watch from a thread of its own instead:
one long watch from the last resourceVersion (bookmarks keep that version current while nothing
changes), resumed when it ends, a fresh list when the version expired (410 Gone), a pause when
the cluster cannot be reached, and `on_change` called for every change that matters. A
Supervisor restarts the thread after anything else.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

import structlog

from brupop.domain.cluster.objects import Listing, VersionListing, WatchBookmark, WatchEvent
from brupop.ports.errors import InvalidObjectError, NotFoundError, PortError, WatchExpiredError
from brupop.services.runtime.mirror import Mirror
from brupop.services.runtime.supervisor import RestartSchedule, Supervisor

T = TypeVar("T")

Lister = Callable[[], Listing[T]]
Watcher = Callable[[str | None, float], Iterator[WatchEvent[T] | WatchBookmark]]

MAX_READS_PER_CHECK = 100
"""Objects a version check reads again one by one; with more out of date, one full list costs
less (against Kubernetes, a request per object)."""

WATCH_SECONDS = 300.0
"""The shortest a watch stays open (each lasts between this and twice this, at random, so that
replicas do not reopen theirs together): as client-go's reflectors, five to ten minutes. The
bookmarks kube-apiserver sends meanwhile keep the version to resume from current."""

log = structlog.get_logger(__name__)
_spread = random.Random()  # its own: the module's generator is for the caller to seed


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class VersionCheck(Generic[T]):
    """How to resync a filled store cheaply: the list of versions, and a read of one object
    by name (None when it is not one the informer follows, such as a Node not opted in)."""

    list_versions: Callable[[], VersionListing]
    read: Callable[[str], T | None]


@dataclass(frozen=True)
class Following:
    """How a following thread watches: each watch lasts `watch_seconds` to twice that; after a
    failure to reach the cluster it waits `retry_seconds`; `restart`: its Supervisor's restart
    schedule; `resync_seconds`: how often it relists (by versions when it has a check) between
    two watches, from its own thread (None: never, the watch is trusted)."""

    watch_seconds: float = WATCH_SECONDS
    retry_seconds: float = 2.0
    restart: RestartSchedule | None = None
    resync_seconds: float | None = None

    def watch_period(self, since_list: float) -> float:
        """How long the next watch lasts, `since_list` seconds after the last list: until the
        next resync when that is due within two `watch_seconds` (the resync's list takes the
        place of the watch's end, so one watch is opened per resync), else its own period."""
        period = self.watch_seconds * (1.0 + _spread.random())
        if self.resync_seconds is None:
            return period
        until_resync = max(0.0, self.resync_seconds - since_list)
        return until_resync if until_resync <= 2 * self.watch_seconds else period

    def resync_due(self, since_list: float) -> bool:
        return self.resync_seconds is not None and since_list >= self.resync_seconds


class Informer(Generic[T]):
    """One kind of object: its list, its watch and the store they feed."""

    def __init__(
        self,
        kind: str,
        lister: Lister[T],
        watcher: Watcher[T],
        mirror: Mirror[T],
        check: VersionCheck[T] | None = None,
        *,
        following: Following | None = None,
    ):
        self.kind = kind
        self._check = check
        self.mirror = mirror
        self._lister = lister
        self._watcher = watcher
        self._following = following or Following()
        self._lock = threading.Lock()
        self._version: str | None = None
        self._listed_at = time.monotonic()
        self.relists = 0
        self.stopping = threading.Event()
        self._supervisor: Supervisor | None = None
        self._thread: threading.Thread | None = None

    @property
    def version(self) -> str | None:
        """The resourceVersion to watch from (None until a first list)."""
        return self._version

    def relist(self, *, refresh: bool = False) -> str | None:
        """List everything and reconcile the store with it; the list's resourceVersion. A
        filled store with a version check is compared by versions first, and only the
        objects that differ are read (all of them by one list when there are many).
        `refresh`: one full list replacing even the objects held at the listed version (what
        the store keeps of an object changed, e.g. a budget's new label key)."""
        began = time.thread_time()
        check = self._check
        if check is not None and self.mirror.filled and not refresh:
            versions = check.list_versions()
            stale = self.mirror.reconcile_versions(versions)
            if len(stale) <= MAX_READS_PER_CHECK:
                for name in stale:
                    self._read_again(check, name, versions.resource_version)
                return self._listed(versions.resource_version, began, read_again=len(stale))
        listing = self._lister()
        self.mirror.reconcile(listing.items, listing.resource_version, refresh=refresh)
        return self._listed(listing.resource_version, began, read_again=None)

    def _read_again(self, check: VersionCheck[T], name: str, list_version: str | None) -> None:
        """One object a version list showed out of date: held afresh, or dropped when gone
        (unless the store holds it newer than the list)."""
        try:
            obj = check.read(name)
        except (NotFoundError, InvalidObjectError):  # gone, or one a list skips as unreadable
            obj = None
        if obj is None:
            self.mirror.remove(name, list_version)
        else:
            self.mirror.put(obj)

    def _listed(self, version: str | None, began: float, read_again: int | None) -> str | None:
        """Note a list's version and time; log what it cost (once per resync and per kind:
        at 10,000 objects a list is the informer's largest piece of work)."""
        with self._lock:
            self._version = version
            self._listed_at = time.monotonic()
            self.relists += 1
        log.info(
            "watch.listed",
            kind=self.kind,
            by="versions" if read_again is not None else "objects",
            held=len(self.mirror),
            read_again=read_again,
            cpu_ms=round((time.thread_time() - began) * 1000, 1),
        )
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
        """The raw watch."""
        return self._watcher(version, timeout_seconds)

    def apply(self, event: WatchEvent[T] | WatchBookmark) -> bool:
        """One event into the store, or a bookmark; remember its version to resume from."""
        if event.resource_version:
            with self._lock:
                self._version = event.resource_version
        return False if isinstance(event, WatchBookmark) else self.mirror.apply(event)

    # --- following from a thread ----------------------------------------------------------

    @property
    def failing(self) -> bool:
        """The following thread keeps failing (it is restarted over and over)."""
        return self._supervisor is not None and self._supervisor.failing

    def start(
        self,
        on_change: Callable[[], None] = _nothing,
        *,
        first: Callable[[], None] = _nothing,
        each_watch: Callable[[], None] = _nothing,
        following: Following | None = None,
    ) -> threading.Thread:
        """Follow the watch from a supervised daemon thread (once) until `stop`. `on_change`:
        after a list and after each event that matters; `first`: once per thread start, before
        anything; `each_watch`: before each watch is opened; `following`: how, when the caller
        says."""
        if following is not None:
            self._following = following
        if self._thread is None:
            body = self._follower(on_change, first, each_watch)
            name, restart = f"watch-{self.kind}", self._following.restart
            self._supervisor = Supervisor(name, body, self.stopping, schedule=restart)
            self._thread = self._supervisor.start()
        return self._thread

    def stop(self, wait_seconds: float = 1.0) -> None:
        """Ask the following thread to end; it does once its watch next yields or ends."""
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(wait_seconds)

    def _since_list(self) -> float:
        return time.monotonic() - self._listed_at

    def pause(self) -> None:
        """Wait out the retry pause (or until stopped)."""
        self.stopping.wait(self._following.retry_seconds)

    def _follower(
        self,
        on_change: Callable[[], None],
        first: Callable[[], None],
        each_watch: Callable[[], None],
    ) -> Callable[[], None]:
        def follow() -> None:
            first()
            while not self.stopping.is_set():
                self._follow_once(on_change, each_watch)

        return follow

    def _follow_once(self, on_change: Callable[[], None], each_watch: Callable[[], None]) -> None:
        """A list when there is no version to resume from or a resync is due, then one watch
        until it ends."""
        following = self._following
        try:
            if self._version is None or following.resync_due(self._since_list()):
                self.relist()
                on_change()
            each_watch()
            for event in self._watcher(self._version, following.watch_period(self._since_list())):
                if self.apply(event):
                    on_change()
                if self.stopping.is_set():
                    return
        except WatchExpiredError:
            with self._lock:
                self._version = None
        except PortError as error:
            # The version is kept: a watch that resumes after the pause misses nothing, and
            # one that is too old by then turns into a fresh list.
            log.warning(
                "watch.interrupted", kind=self.kind, error=type(error).__name__, reason=str(error)
            )
            self.pause()

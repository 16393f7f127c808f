"""ListWatchLoop: one supervised thread that keeps a copy of a cluster collection by listing it,
then watching from the listing's resourceVersion, and listing again when the watch expires or
fails. The apiserver's shadow feed and its agent pod mirror both keep their copy this way."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar

import structlog

from brupop.domain.cluster.objects import Listing, WatchBookmark, WatchEvent
from brupop.ports.errors import PortError, WatchExpiredError
from brupop.services.supervisor import RestartPolicy, Supervisor

T = TypeVar("T")

log = structlog.get_logger(__name__)


class ListWatchSource(Protocol[T]):
    """A collection that can be listed, then watched from the listing's resourceVersion."""

    def list(self) -> Listing[T]: ...

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[T] | WatchBookmark]: ...


class ListWatchLoop(Generic[T]):
    """Feeds `relisted` with each full listing and `apply` with each watch event, from a thread
    of its own (restarted by a Supervisor after anything unexpected) until `stop`."""

    def __init__(
        self,
        name: str,
        source: ListWatchSource[T],
        *,
        relisted: Callable[[tuple[T, ...]], None],
        apply: Callable[[WatchEvent[T]], None],
        watch_seconds: float,
        retry_seconds: float,
        restart: RestartPolicy | None = None,
        first: Callable[[], None] | None = None,
        each_watch: Callable[[], None] | None = None,
    ) -> None:
        self._name = name
        self._source = source
        self._relisted = relisted
        self._apply = apply
        self._watch_seconds = watch_seconds
        self._retry_seconds = retry_seconds
        self._first = first  # once per thread start, before the first listing
        self._each_watch = each_watch  # before each watch is opened
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._supervisor = Supervisor(name, self._run, self.stopping, policy=restart)

    @property
    def failing(self) -> bool:
        """The thread keeps failing (it is restarted over and over)."""
        return self._supervisor.failing

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = self._supervisor.start()

    def stop(self, wait_seconds: float = 1.0) -> None:
        """Ask the thread to end; it does within one watch period."""
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(wait_seconds)

    def pause(self) -> None:
        """Wait out the retry pause (or until stopped)."""
        self.stopping.wait(self._retry_seconds)

    def _run(self) -> None:
        if self._first is not None:
            self._first()
        version: str | None = None
        while not self.stopping.is_set():
            try:
                if version is None:
                    listing = self._source.list()
                    self._relisted(listing.items)
                    version = listing.resource_version
                if self._each_watch is not None:
                    self._each_watch()
                for event in self._source.watch(version, self._watch_seconds):
                    if not isinstance(event, WatchBookmark):
                        self._apply(event)
                    version = event.resource_version or version
                    if self.stopping.is_set():
                        return
            except WatchExpiredError:
                version = None
            except PortError as error:
                log.warning(f"{self._name.replace('-', '_')}.watch_failed", error=str(error))
                version = None
                self.pause()

"""ChangeWatch: wakes the controller loop as soon as a shadow or a Node changes.

Two daemon threads follow the shadow and Node watches and set a wake-up flag; they never decide
anything (the loop re-lists). A watch that expires is resumed from a fresh list; a cluster that
cannot be reached is retried after a pause, and the periodic tick covers the gap. Anything
else a watch raises is logged and the watch restarted by its Supervisor.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import structlog

from brupop.domain.cluster import Listing, Node, WatchEvent, WatchEventType
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.ports.errors import PortError, WatchExpiredError
from brupop.services.supervisor import RestartPolicy, Supervisor


class Watchable(Protocol):
    """Anything listable and watchable (shadows, Nodes)."""

    def list(self) -> Listing[Any]: ...

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Any]]: ...


class ChangeWatch:
    """Follow some watches and call `on_change` for every event seen."""

    def __init__(
        self,
        sources: dict[str, Watchable],
        on_change: Callable[[], None],
        stop: threading.Event,
        *,
        relevant: dict[str, Callable[[WatchEvent[Any]], bool]] | None = None,
        watch_seconds: float = 10.0,
        retry_seconds: float = 2.0,
        restart: RestartPolicy | None = None,
    ) -> None:
        self._sources = sources
        self._restart = restart
        self._relevant = relevant or {}
        self._on_change = on_change
        self._stop = stop
        self._watch_seconds = watch_seconds
        self._retry_seconds = retry_seconds
        self._log = structlog.get_logger(__name__)
        self._supervisors: list[Supervisor] = []

    def start(self) -> list[threading.Thread]:
        """Start one supervised daemon thread per source; they end once `stop` is set."""
        self._supervisors = [
            Supervisor(
                f"watch-{kind}",
                functools.partial(self._follow, kind, source),
                self._stop,
                policy=self._restart,
            )
            for kind, source in self._sources.items()
        ]
        return [supervisor.start() for supervisor in self._supervisors]

    def failing(self) -> bool:
        """A watch keeps failing (its thread is restarted over and over)."""
        return any(supervisor.failing for supervisor in self._supervisors)

    def _follow(self, kind: str, source: Watchable) -> None:
        version: str | None = None
        relevant = self._relevant.get(kind, _always)
        while not self._stop.is_set():
            try:
                if version is None:
                    version = source.list().resource_version
                for event in source.watch(version, self._watch_seconds):
                    version = event.resource_version or version
                    if relevant(event):
                        self._on_change()
                    if self._stop.is_set():
                        return
            except WatchExpiredError:
                version = None
                self._on_change()
            except PortError as error:
                self._log.warning("watch.interrupted", kind=kind, error=type(error).__name__)
                version = None
                self._stop.wait(self._retry_seconds)


class NodeChanges:
    """Which Node events can change a decision: a Node appearing or going, its opt-in label,
    its cordon. Heartbeats and other status updates of a large cluster wake nobody."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[bool, bool]] = {}

    def __call__(self, event: WatchEvent[Any]) -> bool:
        node: Node = event.object
        if event.type is WatchEventType.DELETED:
            self._seen.pop(node.name, None)
            return True
        key = (node.labels.get(OPT_IN_LABEL) == OPT_IN_VALUE, node.unschedulable)
        changed = self._seen.get(node.name) != key
        self._seen[node.name] = key
        return changed


def _always(_event: WatchEvent[Any]) -> bool:
    return True

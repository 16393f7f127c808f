"""ChangeWatch: follows the shadow and Node watches into the controller's mirrors, and wakes
the controller loop as soon as something that matters changed.

One supervised daemon thread per informer. A stream that ends is resumed from the last
resourceVersion; a version that expired (410 Gone) is followed by a fresh list into the mirror;
a cluster that cannot be reached is retried after a pause (the periodic resync covers anything
missed). Anything else a watch raises is logged and the watch restarted by its Supervisor,
from the informer's last resourceVersion.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import structlog

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.update_policy import NODE_PAUSED_LABEL, NODE_PAUSED_VALUE
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.ports.errors import PortError, WatchExpiredError
from brupop.services.runtime.informer import Informer
from brupop.services.supervisor import RestartPolicy, Supervisor


class ChangeWatch:
    """Follow some informers' watches and call `on_change` for every change that matters."""

    def __init__(
        self,
        sources: dict[str, Informer[Any]],
        on_change: Callable[[], None],
        stop: threading.Event,
        *,
        watch_seconds: float = 10.0,
        retry_seconds: float = 2.0,
        restart: RestartPolicy | None = None,
    ) -> None:
        self._sources = sources
        self._restart = restart
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

    def _follow(self, kind: str, source: Informer[Any]) -> None:
        version = source.version
        while not self._stop.is_set():
            try:
                if version is None:
                    version = source.relist()
                    self._on_change()
                for event in source.watch(version, self._watch_seconds):
                    version = event.resource_version or version
                    if source.apply(event):
                        self._on_change()
                    if self._stop.is_set():
                        return
            except WatchExpiredError:
                version = None
            except PortError as error:
                # The version is kept: a watch that resumes after the pause misses nothing,
                # and one that is too old by then turns into a fresh list.
                self._log.warning(
                    "watch.interrupted", kind=kind, error=type(error).__name__, reason=str(error)
                )
                self._stop.wait(self._retry_seconds)


def node_change_matters(old: Node | None, new: Node | None) -> bool:
    """Which Node changes can change a decision: a Node appearing or going, its opt-in label,
    its pause label, its cordon. Heartbeats and other status updates of a large cluster wake
    nobody."""
    if old is None or new is None:
        return old is not new
    return _key(old) != _key(new)


def node_is_paused(node: Node | None) -> bool:
    """The Node carries the pause label (`brupop pause --node`): none of its updates starts."""
    return node is not None and node.labels.get(NODE_PAUSED_LABEL) == NODE_PAUSED_VALUE


def _key(node: Node) -> tuple[bool, bool, bool]:
    opted_in = node.labels.get(OPT_IN_LABEL) == OPT_IN_VALUE
    return (opted_in, node_is_paused(node), node.unschedulable)

"""One shared watch over every shadow, so long-polling agents wait on an event, not on a thread.

A background thread lists and watches the shadows (re-listing when the watch expires) and keeps
each shadow's latest state plus the resourceVersions it had before. An agent asking "tell me when
my shadow is no longer at version V" is answered at once if V is known to be old, and otherwise
waits on one asyncio future that the watch thread resolves (thousands wait at once: a wait holds
no task and no event of its own). A Supervisor restarts the thread after anything it did not
expect.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

import structlog

from brupop.domain.cluster.objects import WatchEvent, WatchEventType
from brupop.domain.shadow import Shadow
from brupop.ports.shadow_repository import ShadowRepository
from brupop.services.list_watch import ListWatchLoop
from brupop.services.supervisor import RestartPolicy

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class FeedAnswer:
    """The feed's answer: the shadow as the watch last saw it (None: there is none)."""

    shadow: Shadow | None


@dataclass
class _Entry:
    shadow: Shadow | None
    past: deque[str] = field(default_factory=lambda: deque(maxlen=16))


class _Waiter:
    """A long poll waiting for a shadow to change: its event loop and the future it awaits (made
    anew each time it waits again; resolved in its loop, so never while it is being replaced)."""

    __slots__ = ("future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()

    def rearm(self) -> None:
        if self.future.done():
            self.future = self.loop.create_future()

    def wake(self) -> None:
        if not self.future.done():
            self.future.set_result(None)


class ShadowFeed:
    """Latest shadows from one watch, and async waits for a shadow to move past a version."""

    def __init__(
        self,
        shadows: ShadowRepository,
        *,
        watch_seconds: float = 10.0,
        retry_seconds: float = 2.0,
        restart: RestartPolicy | None = None,
    ) -> None:
        self._entries: dict[str, _Entry] = {}
        self._waiters: dict[str, set[_Waiter]] = {}
        self._lock = threading.Lock()
        self._ready = False
        self._loop = ListWatchLoop(
            "shadow-feed",
            shadows,
            relisted=self._relisted,
            apply=self._apply,
            watch_seconds=watch_seconds,
            retry_seconds=retry_seconds,
            restart=restart,
        )

    @property
    def ready(self) -> bool:
        """The feed has listed the shadows at least once."""
        return self._ready

    @property
    def failing(self) -> bool:
        """The watch thread keeps failing (it is restarted over and over)."""
        return self._loop.failing

    def latest(self, name: str) -> Shadow | None:
        """The shadow as the watch last saw it (None: not listed yet, or no such shadow)."""
        with self._lock:
            entry = self._entries.get(name) if self._ready else None
            return entry.shadow if entry is not None else None

    def waiting(self) -> int:
        """How many requests are waiting on the feed now."""
        with self._lock:
            return sum(len(waiters) for waiters in self._waiters.values())

    def start(self) -> None:
        """Start the watch thread."""
        self._loop.start()

    def stop(self, wait_seconds: float = 1.0) -> None:
        """Ask the watch thread to end; it does within one watch period."""
        self._loop.stop(wait_seconds)

    async def wait_for_change(
        self, name: str, resource_version: str | None, timeout_seconds: float
    ) -> FeedAnswer | None:
        """The shadow once it differs from `resource_version` (or exists, when None).

        None when the feed cannot tell (not listed yet, or the version is unknown to it) by the
        timeout: the caller then reads the shadow directly.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(timeout_seconds, 0.0)
        waiter = _Waiter(loop)
        with self._lock:
            self._waiters.setdefault(name, set()).add(waiter)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(deadline):
                    while (answer := self._changed(name, resource_version)) is None:
                        await waiter.future
                        waiter.rearm()
                    return answer
            return self._unchanged(name, resource_version)
        finally:
            with self._lock:
                waiting = self._waiters.get(name, set())
                waiting.discard(waiter)
                if not waiting:
                    self._waiters.pop(name, None)

    def answer_now(self, name: str, resource_version: str | None) -> FeedAnswer | None:
        """What the feed can say without waiting: the shadow when it is known to have moved past
        `resource_version` or to be still at it; None when the feed cannot tell."""
        return self._changed(name, resource_version) or self._unchanged(name, resource_version)

    def _changed(self, name: str, version: str | None) -> FeedAnswer | None:
        """An answer when the shadow is known to have moved past `version`."""
        with self._lock:
            if not self._ready:
                return None
            entry = self._entries.get(name)
            current = entry.shadow if entry else None
            if version is None:
                return FeedAnswer(current) if current is not None else None
            if current is not None and current.resource_version == version:
                return None
            if entry is not None and version in entry.past:
                return FeedAnswer(current)
            return None

    def _unchanged(self, name: str, version: str | None) -> FeedAnswer | None:
        """At the timeout: the shadow if the feed knows it is still at `version`."""
        with self._lock:
            if not self._ready:
                return None
            entry = self._entries.get(name)
            current = entry.shadow if entry else None
            if version is None and current is None:
                return FeedAnswer(None)
            if current is not None and current.resource_version == version:
                return FeedAnswer(current)
            return None

    # --- the watch thread -----------------------------------------------------------------

    def _apply(self, event: WatchEvent[Shadow]) -> None:
        shadow = event.object
        with self._lock:
            self._set(shadow.name, None if event.type is WatchEventType.DELETED else shadow)
        self._wake({shadow.name})

    def _relisted(self, shadows: Iterable[Shadow]) -> None:
        listed = {shadow.name: shadow for shadow in shadows}
        with self._lock:
            for name in set(self._entries) | set(listed):
                self._set(name, listed.get(name))
            self._ready = True
            names = set(self._waiters)
        self._wake(names)

    def _set(self, name: str, shadow: Shadow | None) -> None:
        entry = self._entries.setdefault(name, _Entry(None))
        old = entry.shadow
        old_version = old.resource_version if old is not None else None
        if old_version is not None and (shadow is None or old_version != shadow.resource_version):
            entry.past.append(old_version)
        entry.shadow = shadow

    def _wake(self, names: Iterable[str]) -> None:
        """Wake the waiters of `names`: one call into each event loop, however many wait there
        (a rollout wave wakes thousands at once)."""
        by_loop: dict[asyncio.AbstractEventLoop, list[_Waiter]] = {}
        with self._lock:
            for name in names:
                for waiter in self._waiters.get(name, ()):
                    by_loop.setdefault(waiter.loop, []).append(waiter)
        for loop, waiters in by_loop.items():
            try:
                loop.call_soon_threadsafe(_wake_all, waiters)
            except RuntimeError:  # that loop has closed; its waiters are gone with it
                continue


def _wake_all(waiters: list[_Waiter]) -> None:
    for waiter in waiters:
        waiter.wake()

"""One shared watch over every shadow, so long-polling agents wait on an event, not on a thread.

An Informer lists and watches the shadows into its store (re-listing when the watch expires),
and the feed keeps the resourceVersions each shadow had before. An agent asking "tell me when
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
from dataclasses import dataclass

from brupop.domain.shadow import Shadow
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.services.runtime.informer import WATCH_SECONDS, Following, Informer
from brupop.services.runtime.mirror import NAME_OF, RESOURCE_VERSION_OF, Mirror
from brupop.services.runtime.supervisor import RestartSchedule

PAST_VERSIONS = 16
"""The versions remembered per shadow before its current one (an agent asks about the last)."""


@dataclass(frozen=True)
class FeedAnswer:
    """The feed's answer: the shadow as the watch last saw it (None: there is none)."""

    shadow: Shadow | None


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
        watch_seconds: float = WATCH_SECONDS,
        retry_seconds: float = 2.0,
        restart: RestartSchedule | None = None,
    ) -> None:
        self._past: dict[str, deque[str]] = {}
        self._waiters: dict[str, set[_Waiter]] = {}
        self._lock = threading.Lock()
        self._store: Mirror[Shadow] = Mirror(NAME_OF, RESOURCE_VERSION_OF, matters=self._moved)
        self._informer = Informer(
            "shadow-feed",
            shadows.list,
            shadows.watch,
            self._store,
            following=Following(watch_seconds, retry_seconds, restart),
        )

    @property
    def ready(self) -> bool:
        """The feed has listed the shadows at least once."""
        return self._store.filled

    @property
    def failing(self) -> bool:
        """The watch thread keeps failing (it is restarted over and over)."""
        return self._informer.failing

    def latest(self, name: str) -> Shadow | None:
        """The shadow as the watch last saw it (None: not listed yet, or no such shadow)."""
        return self._store.get(name) if self._store.filled else None

    def waiting(self) -> int:
        """How many requests are waiting on the feed now."""
        with self._lock:
            return sum(len(waiters) for waiters in self._waiters.values())

    def start(self) -> None:
        """Start the watch thread."""
        self._informer.start(self._woken)

    def stop(self, wait_seconds: float = 1.0) -> None:
        """Ask the watch thread to end; it does within one watch period."""
        self._informer.stop(wait_seconds)

    async def wait_for_change(
        self, name: str, resource_version: str | None, timeout_seconds: float | None
    ) -> FeedAnswer | None:
        """The shadow once it differs from `resource_version` (or exists, when None).

        None when the feed cannot tell (not listed yet, or the version is unknown to it) by the
        timeout: the caller then reads the shadow directly. With no timeout (None) the wait has
        no deadline of its own: the caller ends it (a long-poll's one timer is its caller's).
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout_seconds is None else loop.time() + max(timeout_seconds, 0.0)
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
        if not self._store.filled:
            return None
        current = self._store.get(name)
        if version is None:
            return FeedAnswer(current) if current is not None else None
        if current is not None and current.resource_version == version:
            return None
        with self._lock:
            past = self._past.get(name)
            return FeedAnswer(current) if past is not None and version in past else None

    def _unchanged(self, name: str, version: str | None) -> FeedAnswer | None:
        """At the timeout: the shadow if the feed knows it is still at `version`."""
        if not self._store.filled:
            return None
        current = self._store.get(name)
        if version is None and current is None:
            return FeedAnswer(None)
        if current is not None and current.resource_version == version:
            return FeedAnswer(current)
        return None

    # --- the watch thread -----------------------------------------------------------------

    def _moved(self, old: Shadow | None, new: Shadow | None) -> bool:
        """The store's note of a change (under its lock): remember the version left behind."""
        if old is not None and old.resource_version is not None:
            with self._lock:
                past = self._past.setdefault(old.name, deque(maxlen=PAST_VERSIONS))
                past.append(old.resource_version)
        return True

    def _woken(self) -> None:
        """After a list or an event: wake the waiters of the shadows that changed."""
        self._wake(self._store.take_changes())

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

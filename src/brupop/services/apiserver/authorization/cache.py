"""A small, bounded, thread-safe cache whose entries expire (positive authorization answers)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

from brupop.ports.clock import Clock

V = TypeVar("V")

DEFAULT_MAX_ENTRIES = 4096


class ExpiringCache(Generic[V]):
    """Values by key, each until its own deadline; the oldest entries go first when full."""

    def __init__(self, clock: Clock, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self._clock = clock
        self._max_entries = max_entries
        self._entries: OrderedDict[str, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        """The value if present and not expired."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            deadline, value = entry
            if self._clock.monotonic() >= deadline:
                del self._entries[key]
                return None
            return value

    def put(self, key: str, value: V, lifetime_seconds: float) -> None:
        """Keep `value` for `lifetime_seconds`; nothing is kept for a lifetime <= 0."""
        if lifetime_seconds <= 0:
            return
        with self._lock:
            self._entries[key] = (self._clock.monotonic() + lifetime_seconds, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)

    def drop(self, key: str) -> None:
        """Forget `key` (nothing happens when it is not there)."""
        with self._lock:
            self._entries.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

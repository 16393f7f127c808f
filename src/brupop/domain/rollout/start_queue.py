"""StartQueue: the shadows ready to start, kept in the order they get slots, so that a pass
reads the first few instead of sorting the fleet."""

from __future__ import annotations

import bisect
from collections.abc import Collection
from typing import NamedTuple


class ReadyKey(NamedTuple):
    """Where a ready shadow stands in the start order; compared as a tuple, field by field."""

    controller_last: bool
    """The shadow's node runs the controller (it starts last)."""
    crash_count: int
    name: str


class StartQueue:
    """Ready shadows by name, sorted by their `ReadyKey`."""

    def __init__(self) -> None:
        self._keys: list[ReadyKey] = []
        self._by_name: dict[str, ReadyKey] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def key(self, name: str) -> ReadyKey | None:
        """Where `name` stands, if it is ready."""
        return self._by_name.get(name)

    def put(self, key: ReadyKey) -> None:
        """Add `key`'s shadow, or move it to where `key` says."""
        self.remove(key.name)
        self._by_name[key.name] = key
        bisect.insort(self._keys, key)

    def remove(self, name: str) -> None:
        """`name` is no longer ready (nothing when it was not)."""
        old = self._by_name.pop(name, None)
        if old is not None:
            del self._keys[bisect.bisect_left(self._keys, old)]

    def names(self, first: int | None = None) -> list[str]:
        """The ready names in start order; only the `first` ones when given."""
        keys = self._keys if first is None else self._keys[:first]
        return [key.name for key in keys]

    def among(self, names: Collection[str]) -> list[str]:
        """The ready shadows among `names`, in start order (costs `names`, not the fleet)."""
        by_name = self._by_name
        return [key.name for key in sorted(by_name[n] for n in names if n in by_name)]

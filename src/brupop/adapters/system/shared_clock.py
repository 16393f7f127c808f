"""SharedClock: this machine's clock moved by an offset kept in a file, so that several processes
share one virtual wall clock (simulate's `--start-at` and `--clock-rate`).

The process that owns the clock (simulate) writes the offset; every process it starts (the
agents, and through them the host emulator) is given the file's path in BRUPOP_SIM_CLOCK_FILE
and reads the offset again at each `now()`, so a step ahead is seen by all. Only the wall clock
moves: `monotonic()` and `sleep()` stay this machine's, so intervals, timeouts measured on the
monotonic clock and every wait keep their real length.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from datetime import UTC, datetime

from brupop.adapters.system.clock import SystemClock

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from pathlib import Path

    from brupop.ports.clock import Clock

CLOCK_FILE_ENV = "BRUPOP_SIM_CLOCK_FILE"
"""The simulate-only setting naming the file that holds the offset (seconds, as text)."""


class SharedClock:
    """The Clock port: the real clock plus the offset in `path` (read at each `now()`)."""

    def __init__(self, path: Path, *, offset: float = 0.0, owner: bool = False) -> None:
        self._path = path
        self._offset = offset
        self._owner = owner  # the owner knows the offset: it wrote it

    @classmethod
    def create(cls, path: Path, offset: float) -> SharedClock:
        """The owner's clock, `offset` seconds ahead of this machine's (written to `path`)."""
        clock = cls(path, offset=offset, owner=True)
        clock._write()
        return clock

    @property
    def path(self) -> Path:
        return self._path

    def offset(self) -> float:
        """Seconds this clock is ahead of the machine's; the last good value if the file
        cannot be read."""
        if not self._owner:
            try:
                value = float(self._path.read_text(encoding="ascii"))
            except (OSError, ValueError, UnicodeDecodeError):
                return self._offset
            if math.isfinite(value):
                self._offset = value
        return self._offset

    def advance(self, seconds: float) -> None:
        """Move the wall clock `seconds` ahead (the owner only; never back)."""
        if not self._owner:
            raise PermissionError("only the clock's owner moves it")
        if seconds > 0:
            self._offset += seconds
            self._write()

    def now(self) -> datetime:
        return datetime.fromtimestamp(time.time() + self.offset(), UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def _write(self) -> None:
        """Replace the file whole, so a reader never sees half a number."""
        partial = self._path.with_name(self._path.name + ".partial")
        partial.write_text(repr(self._offset), encoding="ascii")
        os.replace(partial, self._path)


def clock_from_environment(env: Mapping[str, str]) -> Clock:
    """The shared clock when simulate named one (BRUPOP_SIM_CLOCK_FILE), else the real one."""
    path = env.get(CLOCK_FILE_ENV)
    if not path:
        return SystemClock()
    from pathlib import Path  # simulated runs only: the agent's start skips it (about 5 ms)

    clock = SharedClock(Path(path))
    clock.offset()  # the value at launch, kept should the file go away later
    return clock

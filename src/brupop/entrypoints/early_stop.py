"""A SIGTERM that arrives while a process is still importing, kept until its real handler runs.

A pod deleted at start-up, or a host going down, can signal the agent before it has loaded its
modules. Without this, the interpreter would die of the signal (exit -15) instead of stopping
cleanly with exit 0 like any other stop.
"""

from __future__ import annotations

import signal
from types import FrameType

_requested = False


def _remember(_signum: int, _frame: FrameType | None) -> None:
    global _requested
    _requested = True


def install() -> None:
    """Remember SIGTERM from now on, until the process installs its own handler."""
    signal.signal(signal.SIGTERM, _remember)


def requested() -> bool:
    """A SIGTERM arrived while the provisional handler was in place."""
    return _requested

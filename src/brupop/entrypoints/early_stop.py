"""SIGTERM around the agent's own handler: kept while it imports, ignored once it is leaving.

A pod deleted at start-up, or a host going down, can signal the agent before it has loaded its
modules. Without the provisional handler, the interpreter would die of the signal (exit -15)
instead of stopping cleanly with exit 0 like any other stop.

The same holds on the way out: when the interpreter shuts down it puts back the default action
of every signal that has a Python handler, so a second SIGTERM then (the kubelet's after a
reboot's, say) would kill a process that has already decided to stop. An ignored signal is left
ignored, which closes that window.
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


def ignore_from_now() -> None:
    """The process is stopping anyway: later SIGTERMs must not kill it on its way out."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

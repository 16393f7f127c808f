"""StopFlag: how a SIGTERM reaches the agent loop without interrupting a step half-way."""

from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from brupop.ports.clock import Clock


# A stop is seen within a second: well inside the kubelet's 30 s grace. Each look wakes the
# idle agent, and at four a second the looks were two thirds of its idle CPU (docs/bench.md).
POLL_SECONDS = 1.0


class StopFlag:
    """Set from a signal handler (a plain attribute write, safe there); read at safe points.

    Waits poll it in short slices, so a stop cuts a wait short without any lock that a
    signal handler could deadlock on.
    """

    def __init__(self) -> None:
        self._requested = False

    def request(self) -> None:
        """Ask the agent to stop at its next safe point."""
        self._requested = True

    @property
    def requested(self) -> bool:
        """A stop was asked for."""
        return self._requested

    def wait(self, clock: Clock, seconds: float, poll_seconds: float = POLL_SECONDS) -> bool:
        """Sleep up to `seconds` on `clock`; return True as soon as a stop is requested."""
        deadline = clock.monotonic() + seconds
        while not self._requested:
            remaining = deadline - clock.monotonic()
            if remaining <= 0:
                break
            clock.sleep(min(poll_seconds, remaining))
        return self._requested

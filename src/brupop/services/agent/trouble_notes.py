"""TroubleNotes: what the agent logs about trouble, once per streak rather than once per loop.

Trouble is the cluster or the host failing a call (a port error: unavailable, refused, ...):
one WARN when it starts or changes, its repeats at DEBUG, one INFO once a tick gets through.
A bug (an unexpected error) is one ERROR with its traceback per streak, its repeats at DEBUG,
one INFO once a tick succeeds again. No line repeats every loop while nothing changes.
"""

from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from brupop.services.agent.event_log import EventLog


BUG_REASON_MAX_LENGTH = 300


class TroubleNotes:
    """The current streak of trouble and of bugs, and the lines that start and end them."""

    def __init__(self, log: EventLog, retry_in_seconds: float) -> None:
        self._log = log
        self._retry_in_seconds = retry_in_seconds
        self._trouble: tuple[str, str] | None = None  # the error's kind and reason
        self._bug: str | None = None  # the kind of unexpected error in the current streak

    def trouble(self, event: str, error: Exception) -> None:
        """WARN once per kind of trouble (no traceback); repeats of the same one go to DEBUG."""
        key = (type(error).__name__, str(error))
        emit = self._log.debug if key == self._trouble else self._log.warning
        emit(event, error=key[0], reason=key[1], retry_in_seconds=self._retry_in_seconds)
        self._trouble = key

    def trouble_over(self) -> None:
        """A tick got through (the shadow read, the host asked, the status reported)."""
        if self._trouble is not None:
            self._log.info("agent.recovered_from_trouble", error=self._trouble[0])
            self._trouble = None

    def bug(self, error: Exception) -> None:
        """ERROR with its traceback once per streak of unexpected errors; repeats go to DEBUG.
        Called while `error` is being handled, so the traceback is its own."""
        if self._bug is None:
            self._log.error(
                "agent.unexpected_error",
                error=type(error).__name__,
                reason=str(error)[:BUG_REASON_MAX_LENGTH],
                retry_in_seconds=self._retry_in_seconds,
                exc_info=True,
            )
        else:
            self._log.debug("agent.unexpected_error_again", error=type(error).__name__)
        self._bug = type(error).__name__

    def bug_over(self) -> None:
        """A tick ended without an unexpected error."""
        if self._bug is not None:
            self._log.info("agent.recovered_from_unexpected_error", error=self._bug)
            self._bug = None

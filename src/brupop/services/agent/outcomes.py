"""How an agent run ends, and the signals that carry a step's outcome up to the loop."""

from __future__ import annotations

from enum import StrEnum

from brupop.domain.value_objects import value_object


class ExitKind(StrEnum):
    """Why the agent loop returned."""

    STOPPED = "stopped"
    """Asked to stop (SIGTERM): left at a safe point."""
    REBOOTING = "rebooting"
    """The host is rebooting into the update; the pod will start again after it."""
    FATAL = "fatal"
    """The agent cannot go on (e.g. the spec asks for ErrorReset); needs a human."""


@value_object
class AgentExit:
    """The end of a run, with a one-line reason for fatal ends."""

    kind: ExitKind
    reason: str = ""


class Next(StrEnum):
    """What the loop does after one tick."""

    WAIT_FOR_CHANGE = "wait_for_change"
    """All done: long-poll the shadow until it changes (or the poll times out)."""
    RETRY_LATER = "retry_later"
    """Something failed: pause the loop interval, then try again."""


class StopRequested(Exception):
    """Raised at a safe point once a stop was requested; unwinds to the loop."""


class RebootIssued(Exception):
    """The host accepted (or died while accepting) the reboot; the agent's work is over."""


class SpecWithdrawn(Exception):
    """The controller asked for something else while a step ran (e.g. it timed the step out)."""

"""Port errors: what an adapter raises, whatever technology failed underneath.

Services catch these, never a client library's exceptions.
"""

from __future__ import annotations

from brupop.domain.host.command_result import CommandResult


class PortError(Exception):
    """Base of every error an adapter raises through a port."""


# --- the Bottlerocket host (UpdateApi) -------------------------------------------------


class HostApiError(PortError):
    """A host command did not give the expected answer."""

    def __init__(self, message: str, result: CommandResult | None = None) -> None:
        super().__init__(message)
        self.result = result


class HostUnavailableError(HostApiError):
    """Transient: the lock stayed held (423) or the host API could not be reached."""


class HostRejectedError(HostApiError):
    """The host answered with an HTTP error that retrying will not fix (404, 409, ...)."""

    def __init__(self, message: str, status: int, result: CommandResult | None = None) -> None:
        super().__init__(message, result)
        self.status = status


class HostStateConflictError(HostRejectedError):
    """409: the host's update state does not allow the command; it changed under the agent, so
    refresh and decide again."""


class HostCommandFailedError(HostApiError):
    """The host ran the update command and reports it failed, or it never finished in time."""


class HostResponseError(HostApiError):
    """The host's output could not be understood (garbage, or not the expected JSON)."""


class HostCommandKilledError(HostApiError):
    """`apiclient` was killed by a signal before it could answer (e.g. the host is going down)."""

    def __init__(self, message: str, signal: int, result: CommandResult | None = None) -> None:
        super().__init__(message, result)
        self.signal = signal


# --- the cluster (shadows, nodes, pods) and the apiserver ---------------------------------


class NotFoundError(PortError):
    """The object does not exist."""


class AlreadyExistsError(PortError):
    """An object of that name already exists."""


class ConflictError(PortError):
    """A write met a newer resourceVersion than the one it was based on."""


class WatchExpiredError(PortError):
    """The watch's resourceVersion is too old (410 Gone): re-list and start again."""


class InvalidObjectError(PortError):
    """The cluster refused the object as invalid (422)."""


class UnauthorizedError(PortError):
    """The caller is not authenticated (401)."""


class ForbiddenError(PortError):
    """The caller is authenticated but not allowed (403)."""


class TooManyRequestsError(PortError):
    """A PodDisruptionBudget refuses an eviction (a 429 whose Status names the budget); a 429
    that only sheds load is a ThrottledError."""


class UnavailableError(PortError):
    """The cluster or the apiserver could not be reached or failed (5xx, connection error)."""


class ThrottledError(UnavailableError):
    """The cluster is shedding load (a 429 from API Priority and Fairness, not a budget's
    refusal): retry after `retry_after_seconds` (None when the answer did not say)."""

    def __init__(self, message: str, *, retry_after_seconds: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class DrainFailedError(PortError):
    """A drain gave up: pods that had to leave are still on the node. The message names them."""

    def __init__(self, message: str, blockers: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.blockers = blockers

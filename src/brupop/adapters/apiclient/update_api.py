"""ApiclientUpdateApi: the UpdateApi port over `apiclient raw -u URI [-m POST]`.

Fixes the original's flaws: no panic on odd output (typed errors only), retries with full
jitter for transient outcomes only, and host commands awaited by polling the update status
until the command's own record appears (AND, not OR; newer than the request; a deadline).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from brupop.adapters.apiclient import host_answers, outcome
from brupop.adapters.apiclient.outcome import TransientHostError
from brupop.adapters.apiclient.rate_limit import RateLimiter
from brupop.adapters.apiclient.runner import SubprocessRunner
from brupop.adapters.system import event_lines, jitter
from brupop.domain.boot_mode import BootMode
from brupop.domain.host.command_result import CommandResult
from brupop.domain.host.host import (
    CommandStatus,
    CommandType,
    HostCommand,
    HostUpdateStatus,
    OsInfo,
)
from brupop.domain.host_kind import HostClass
from brupop.domain.retry_backoff import Backoff
from brupop.ports.errors import HostCommandFailedError

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import TypeVar

    from brupop.adapters.apiclient.runner import CommandRunner
    from brupop.ports.clock import Clock

    _T = TypeVar("_T")

log = event_lines.get_logger(__name__)

OS_URI = "/os"
SETTINGS_URI = "/settings?prefix=settings.updates"
FIPS_REPORT_URI = "/report/fips?format=json"
STATUS_URI = "/updates/status"
REBOOT_URI = "/actions/reboot"
COMMAND_URIS = {
    CommandType.REFRESH: "/actions/refresh-updates",
    CommandType.PREPARE: "/actions/prepare-update",
    CommandType.ACTIVATE: "/actions/activate-update",
    CommandType.DEACTIVATE: "/actions/deactivate-update",
}


class ApiclientUpdateApi:
    """The host's update API through the `apiclient` binary (defaults are the original's)."""

    def __init__(
        self,
        clock: Clock,
        *,
        apiclient_path: str = "apiclient",
        timeout_seconds: float = 60.0,
        rate_period_seconds: float = 10.0,
        rate_burst: int = 2,
        retries: int = 5,
        retry_base_seconds: float = 10.0,
        retry_max_seconds: float = 60.0,
        poll_interval_seconds: float = 2.0,
        command_deadline_seconds: float = 600.0,
        clock_skew_seconds: float = 2.0,
        runner: CommandRunner | None = None,
    ) -> None:
        self._clock = clock
        self._apiclient = apiclient_path
        self._timeout = timeout_seconds
        self._limiter = RateLimiter(clock, rate_period_seconds, rate_burst)
        self._retries = max(0, retries)
        self._backoff = Backoff(retry_base_seconds, retry_max_seconds)
        self._poll_interval = poll_interval_seconds
        self._deadline = command_deadline_seconds
        self._skew = timedelta(seconds=clock_skew_seconds)
        self._run = runner or SubprocessRunner(clock)

    # --- UpdateApi --------------------------------------------------------------------

    def os_info(self) -> OsInfo:
        return self._call(OS_URI, outcome.parse_os_info, rate_limited=False)

    def host_class(self) -> HostClass:
        return self._call(SETTINGS_URI, outcome.parse_host_class, rate_limited=False)

    def boot_mode(self) -> BootMode | None:
        return self._call(FIPS_REPORT_URI, outcome.parse_boot_mode, rate_limited=False)

    def update_status(self) -> HostUpdateStatus | None:
        return self._call(STATUS_URI, outcome.parse_update_status)

    def refresh_updates(self) -> HostUpdateStatus:
        return self._command(CommandType.REFRESH)

    def prepare_update(self) -> HostUpdateStatus:
        return self._command(CommandType.PREPARE)

    def activate_update(self) -> HostUpdateStatus:
        return self._command(CommandType.ACTIVATE)

    def deactivate_update(self) -> HostUpdateStatus:
        return self._command(CommandType.DEACTIVATE)

    def reboot(self) -> None:
        self._call(REBOOT_URI, outcome.check_accepted, method="POST", rate_limited=False)
        log.info("host.reboot_requested")

    # --- host commands: POST, then poll until the host has recorded the result ---------

    def _command(self, command: CommandType) -> HostUpdateStatus:
        requested_at = self._clock.now()
        printed = self._call(COMMAND_URIS[command], outcome.unexpected_output, method="POST")
        not_before = requested_at - self._skew
        budget = host_answers.wait_budget(command, self._deadline)
        deadline = self._clock.monotonic() + budget
        while True:
            status = self._poll_status()
            record = status.most_recent_command if status else None
            if status is not None and record is not None:
                if record.finished(command, not_before=not_before):
                    return self._finished(command, status, record)
                if record.timestamp is not None and record.timestamp >= not_before:
                    raise HostCommandFailedError(
                        _not_recorded(command, record, requested_at=requested_at, printed=printed)
                    )
            if self._clock.monotonic() >= deadline:
                raise HostCommandFailedError(f"{command.value}: not finished within {budget:g} s")
            self._clock.sleep(self._poll_interval)

    def _finished(
        self, command: CommandType, status: HostUpdateStatus, record: HostCommand
    ) -> HostUpdateStatus:
        if record.cmd_status is not CommandStatus.SUCCESS:
            stderr = (record.stderr or "").strip().splitlines()
            raise HostCommandFailedError(
                f"{command.value}: host reports {record.cmd_status.value}"
                f" (exit status {record.exit_status})" + (f": {stderr[0][:200]}" if stderr else "")
            )
        log.info("host.command_finished", command=command.value, update_state=status.update_state)
        return status

    def _poll_status(self) -> HostUpdateStatus | None:
        """One status read; None while the host works (423) or has no status yet. Not
        rate-limited: a command is one call to the limit however often it is waited on, as
        `apiclient update check` waits inside one call (a rebooted node's first report waited
        a whole period for its second poll)."""
        try:
            return self._attempt(STATUS_URI, outcome.parse_update_status, "GET", False)
        except TransientHostError as error:
            log.debug("host.command_running", reason=str(error))
            return None

    # --- one call, with rate limit and retries for transient outcomes ------------------

    def _call(
        self,
        uri: str,
        parse: Callable[[CommandResult], _T],
        *,
        method: str = "GET",
        rate_limited: bool = True,
    ) -> _T:
        attempt = 1
        while True:
            try:
                return self._attempt(uri, parse, method, rate_limited)
            except TransientHostError as error:
                if attempt > self._retries:
                    raise
                wait = self._backoff.delay(attempt, jitter.uniform)
                log.debug(
                    "apiclient.retrying",
                    attempt=attempt,
                    wait_seconds=round(wait, 3),
                    reason=str(error),
                )
                self._clock.sleep(wait)
                attempt += 1

    def _attempt(
        self, uri: str, parse: Callable[[CommandResult], _T], method: str, rate_limited: bool
    ) -> _T:
        if rate_limited:
            self._limiter.acquire()
        argv = [self._apiclient, "raw", "-u", uri] + (["-m", method] if method != "GET" else [])
        result = self._run(argv, self._timeout)
        log.debug(
            "apiclient.called",
            uri=uri,
            method=method,
            exit_code=result.exit_code,
            signal=result.signal,
            seconds=round(result.duration_seconds, 3),
        )
        return parse(result)


def _not_recorded(
    command: CommandType, record: HostCommand, *, requested_at: datetime, printed: str
) -> str:
    """Why the host's latest record is another command's, in what is known of it."""
    other = record.cmd_type.value
    if record.timestamp is not None and record.timestamp >= requested_at:
        seen = f"the host ran {other} after it"
    else:
        seen = f"the host has not recorded it: its latest command is {other}"
    if printed:
        seen += f"; its answer to the request was unexpected output: {printed!r}"
    return f"{command.value}: {seen}"

"""HostObserver: what the host runs and which update it offers, for the agent's status.

The running version is read every loop (it is cheap and not rate-limited); the host is asked
to look for updates at most once per update-check interval, the first time at once.
"""

from __future__ import annotations

from brupop.domain.host.agent_shadow import ShadowStatus
from brupop.domain.host.agent_status import Observation, target_version
from brupop.domain.versions import is_version
from brupop.ports.clock import Clock
from brupop.ports.errors import HostApiError, HostCommandKilledError, HostResponseError
from brupop.ports.update_api import UpdateApi
from brupop.services.agent.event_log import EventLog
from brupop.services.agent.outcomes import StopRequested
from brupop.services.agent.stop import StopFlag


class HostObserver:
    """Reads `/os` and runs the periodic update check; remembers the last check's answer."""

    def __init__(
        self,
        update_api: UpdateApi,
        clock: Clock,
        stop: StopFlag,
        log: EventLog,
        check_interval_seconds: float,
    ) -> None:
        self._api = update_api
        self._clock = clock
        self._stop = stop
        self._log = log
        self._interval = check_interval_seconds
        self._next_check_at: float | None = None
        self._checked = False
        self._chosen: str | None = None

    def observe(self, previous: ShadowStatus | None) -> Observation:
        """The versions to report now. Raises HostApiError when `/os` cannot be read."""
        current = self._api.os_info().version_id
        if not is_version(current):
            raise HostResponseError(
                f"the host reports a running version that is not semver: {current!r}"
            )
        if self._check_due():
            self._check_for_updates()
        return Observation(
            current_version=current,
            target_version=target_version(current, self._chosen, self._checked, previous),
        )

    def _check_due(self) -> bool:
        return self._next_check_at is None or self._clock.monotonic() >= self._next_check_at

    def _check_for_updates(self) -> None:
        self._next_check_at = self._clock.monotonic() + self._interval
        try:
            status = self._api.refresh_updates()
        except HostApiError as error:
            if isinstance(error, HostCommandKilledError) and self._stop.requested:
                raise StopRequested from error
            self._log.warning("update_check.failed", error=type(error).__name__, reason=str(error))
            return
        chosen = status.chosen_version()
        if not self._checked or chosen != self._chosen:
            self._log.info("update_check.done", chosen_update=chosen)
        self._checked = True
        self._chosen = chosen

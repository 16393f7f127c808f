"""HostObserver: what the host runs, what kind of host it is and which update it offers.

The running version is read every loop (it is cheap and not rate-limited). The host's kind and
its boot mode (FIPS or not) are read once at start and again whenever the running version
changes (after a reboot); a host that cannot update in place is never asked to look for updates.
An updatable one is asked at most once per update-check interval, the first time at once.
"""

from __future__ import annotations

from brupop.domain.boot_mode import BootMode, changed_from
from brupop.domain.host.agent_shadow import AgentShadowStatus
from brupop.domain.host.agent_status import Observation, target_version
from brupop.domain.host_kind import VARIANT_MAX_LENGTH, HostClass, HostKind
from brupop.domain.versions import is_version
from brupop.ports.errors import HostApiError, HostCommandKilledError, HostResponseError
from brupop.services.agent.outcomes import StopRequested
from brupop.services.agent.stop import StopFlag

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from brupop.ports.agent.update_api import UpdateApi
    from brupop.ports.clock import Clock
    from brupop.services.agent.event_log import EventLog


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
        self._host: HostClass | None = None
        self._boot_mode: BootMode | None = None
        self._classified_for: str | None = None  # the running version the kind was read on

    def observe(self, previous: AgentShadowStatus | None) -> Observation:
        """The versions and host kind to report now. Raises HostApiError when `/os` or the
        host's kind cannot be read."""
        info = self._api.os_info()
        current = info.version_id
        if not is_version(current):
            raise HostResponseError(
                f"the host reports a running version that is not semver: {current!r}"
            )
        host = self._classify(current)
        if host.kind.takes_updates and self._check_due():
            self._check_for_updates()
        target = (
            target_version(current, self._chosen, self._checked, previous)
            if host.kind.takes_updates
            else current
        )
        variant = info.variant_id
        before = previous.boot_mode if previous else None
        recorded = previous.boot_mode_changed_from if previous else None
        return Observation(
            current_version=current,
            target_version=target,
            host_kind=host.kind,
            host_note=host.note or None,
            variant=variant if variant and len(variant) <= VARIANT_MAX_LENGTH else None,
            boot_mode=self._boot_mode,
            boot_mode_changed_from=changed_from(self._boot_mode, before, recorded),
        )

    def _classify(self, current: str) -> HostClass:
        """The host's kind and boot mode, read at start and again once it runs another version."""
        if self._host is None or self._classified_for != current:
            host = self._api.host_class()
            if host != self._host:
                unexpected = host.kind is HostKind.UNEXPECTED_ANSWER
                emit = self._log.warning if unexpected else self._log.info
                emit("host.classified", host_kind=str(host.kind), note=host.note)
            self._boot_mode = self._api.boot_mode()
            self._host, self._classified_for = host, current
        return self._host

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

"""UpdateSteps: the host and node commands behind each desired state, with safe points between.

Each method either finishes its whole sequence or raises: a typed error for a failed step,
StopRequested at a safe point once a stop was asked for, RebootIssued once the host reboots.
"""

from __future__ import annotations

from collections.abc import Callable

from brupop.domain.errors import UnexpectedHostStateError
from brupop.domain.host.agent_steps import (
    StagingStep,
    check_ready_to_reboot,
    next_staging_step,
    staged_version,
)
from brupop.domain.host.command_result import signal_name
from brupop.domain.host.host import HostUpdateStatus
from brupop.domain.host.prestage_steps import is_activated, next_prestage_step
from brupop.ports.errors import HostCommandKilledError, HostStateConflictError
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.outcomes import RebootIssued, SpecWithdrawn, StopRequested
from brupop.services.agent.stop import StopFlag

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Protocol

    from brupop.ports.agent.node_operations import NodeOperations
    from brupop.ports.agent.update_api import UpdateApi
    from brupop.ports.clock import Clock
    from brupop.services.agent.event_log import EventLog

    class _NextStep(Protocol):
        """A rule choosing the next host command towards `version`: agent_steps, prestage_steps."""

        def __call__(
            self, host: HostUpdateStatus | None, version: str, *, refreshed: bool
        ) -> StagingStep | None: ...


# refresh, deactivate, prepare, activate: no sequence needs more commands than these.
_MAX_STAGING_STEPS = 4


class UpdateSteps:
    """Stage an update, reboot into it, and give the node back to its workloads."""

    def __init__(
        self,
        update_api: UpdateApi,
        node_operations: NodeOperations,
        clock: Clock,
        config: AgentConfig,
        stop: StopFlag,
        log: EventLog,
        still_wanted: Callable[[str], bool] = lambda _version: True,
    ) -> None:
        self._still_wanted = still_wanted
        self._api = update_api
        self._node = node_operations
        self._clock = clock
        self._config = config
        self._stop = stop
        self._log = log

    def checkpoint(self) -> None:
        """A safe point: stop here if a stop was requested."""
        if self._stop.requested:
            raise StopRequested

    def stage(self, version: str) -> HostUpdateStatus | None:
        """Bring the host to Ready for exactly `version`, skipping what it has already done;
        the host's update status at the end.

        Unless the host already holds `version`, this starts with a refresh of its offer; a
        failed refresh is a failed step like any other host error.
        """
        return self._steps_to(version, next_staging_step)

    def prepare_ahead(self, version: str) -> HostUpdateStatus | None:
        """Leave the host Staged with `version` (prepared, not activated), ahead of the node's
        turn: no cordon, no drain. The host's update status at the end."""
        return self._steps_to(version, next_prestage_step)

    def unstage(self) -> HostUpdateStatus | None:
        """Take back an activation (Ready -> Staged) so that an unplanned reboot boots the
        running version; the host's update status at the end."""
        self.checkpoint()
        host = self._api.update_status()
        if not is_activated(host):
            return host
        host = self._api.deactivate_update()
        self._log.info("update.unstaged", version=staged_version(host), host_state="Staged")
        return host

    def _steps_to(
        self,
        version: str,
        next_step: _NextStep,
    ) -> HostUpdateStatus | None:
        self.checkpoint()
        host = self._api.update_status()
        done: list[StagingStep] = []
        conflicted = False
        while step := next_step(host, version, refreshed=StagingStep.REFRESH in done):
            if step in done or len(done) >= _MAX_STAGING_STEPS:
                state = host.update_state if host is not None else "uninitialised"
                raise UnexpectedHostStateError(
                    f"the host is still {state} after {step}; expected it to move on"
                )
            self.checkpoint()
            self._log.info("update.step", step=str(step), version=version)
            try:
                host = self._run(step)
            except HostStateConflictError as error:
                if conflicted or step is StagingStep.REFRESH:
                    raise
                # 409: the host's state moved under us. Refresh once and decide again from it.
                conflicted = True
                self._log.info("update.host_state_changed", step=str(step), reason=str(error))
                host, done = self._api.refresh_updates(), [StagingStep.REFRESH]
                continue
            done.append(step)
        if not done:
            self._log.info("update.already_staged", version=version)
        return host

    def _run(self, step: StagingStep) -> HostUpdateStatus:
        if step is StagingStep.REFRESH:
            return self._api.refresh_updates()
        if step is StagingStep.DEACTIVATE:
            return self._api.deactivate_update()
        if step is StagingStep.PREPARE:
            return self._api.prepare_update()
        return self._api.activate_update()

    def reboot_into(self, version: str) -> None:
        """Leave the load balancers (if configured), drain, and reboot into `version`.

        Never returns normally: it raises RebootIssued once the host takes the reboot, or
        SpecWithdrawn when, after the drain, the controller no longer wants this reboot.
        """
        self.checkpoint()
        check_ready_to_reboot(self._api.update_status(), version)
        wait = self._config.exclude_from_lb_wait_seconds
        if wait > 0:
            self.checkpoint()
            self._node.exclude_from_load_balancers()
            self._log.info("node.excluded_from_load_balancers", wait_seconds=wait)
            if self._stop.wait(self._clock, wait):
                raise StopRequested
        self.checkpoint()
        self._log.info("node.draining", version=version)
        self._node.cordon_and_drain()
        self.checkpoint()
        # A drain can outlast the controller's timeout for this state: reboot only if the
        # reboot is still wanted, or the node would go down after its slot was given back.
        if not self._still_wanted(version):
            raise SpecWithdrawn
        check_ready_to_reboot(self._api.update_status(), version)
        self._reboot(version)

    def _reboot(self, version: str) -> None:
        try:
            self._api.reboot()
        except HostCommandKilledError as error:
            # The reboot took the host down under apiclient: the expected way for this to end.
            self._log.info(
                "node.rebooting_into_update",
                version=version,
                apiclient=f"killed by {signal_name(error.signal)}",
            )
            raise RebootIssued from None
        self._log.info(
            "node.rebooting_into_update",
            version=version,
            awaiting_shutdown_seconds=self._config.reboot_wait_seconds,
        )
        self._stop.wait(self._clock, self._config.reboot_wait_seconds)
        raise RebootIssued

    def recover(self) -> None:
        """Put the node back in service: back into the load balancers, then uncordoned.

        Both calls are idempotent and undo only what brupop did, so they run whatever the
        load-balancer setting is now (the original skipped the first when it was 0).
        """
        self.checkpoint()
        self._node.restore_to_load_balancers()
        self.checkpoint()
        self._node.uncordon()

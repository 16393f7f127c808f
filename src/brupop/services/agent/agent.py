"""NodeAgent: drives this node's shadow from its status towards its spec, one tick at a time.

The behaviour is the original agent's (behaviour doc, section 4) with its flaws fixed: the update
is pinned to spec.version, work the host already did is skipped, transient cluster errors never
count as crashes, a spec of ErrorReset is fatal, and the loop long-polls instead of sleeping.
"""

from __future__ import annotations

from brupop.domain.boot_mode import describe_change
from brupop.domain.errors import BootModeChangedError, DomainError, VersionMismatchError
from brupop.domain.host.agent_shadow import AgentShadow, AgentShadowSpec, AgentShadowStatus
from brupop.domain.host.agent_status import (
    Observation,
    initial_status,
    status_after_failure,
    status_after_success,
    status_refreshed,
)
from brupop.domain.host.agent_steps import same_version
from brupop.domain.host.prestage_steps import HeldUpdate, held_update, with_held_update
from brupop.domain.states import UpdateState
from brupop.ports.errors import (
    DrainFailedError,
    HostApiError,
    HostCommandKilledError,
    InvalidObjectError,
    PortError,
)
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.long_poll import await_change
from brupop.services.agent.observer import HostObserver
from brupop.services.agent.outcomes import (
    AgentExit,
    ExitKind,
    Next,
    RebootIssued,
    SpecWithdrawn,
    StopRequested,
)
from brupop.services.agent.prestaging import Prestaging
from brupop.services.agent.stop import StopFlag
from brupop.services.agent.trouble_notes import TroubleNotes
from brupop.services.agent.update_steps import UpdateSteps

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from brupop.ports.agent.node_operations import NodeOperations
    from brupop.ports.agent.shadow_store import ShadowStore
    from brupop.ports.agent.update_api import UpdateApi
    from brupop.ports.clock import Clock
    from brupop.services.agent.event_log import EventLog

# What makes an update step fail (ErrorReset, one more crash). Other port errors are the
# cluster being unreachable for a moment: no state change, try again next loop.
STEP_FAILURES: tuple[type[Exception], ...] = (HostApiError, DrainFailedError, DomainError)

_QUIET_STATES = (UpdateState.IDLE, UpdateState.MONITORING_UPDATE)
# Sent back to Idle from these, the host may be left activated without having rebooted.
_MAY_BE_ACTIVATED = (UpdateState.STAGED_AND_PERFORMED_UPDATE, UpdateState.ERROR_RESET)


class FatalSpecError(Exception):
    """The spec asks for something no agent may do; a human has to look."""


class NodeAgent:
    """The agent's state machine over its ports; `tick()` is one pass, `run()` loops."""

    def __init__(
        self,
        update_api: UpdateApi,
        shadow_store: ShadowStore,
        node_operations: NodeOperations,
        clock: Clock,
        config: AgentConfig | None = None,
        *,
        stop: StopFlag | None = None,
        log: EventLog,
    ) -> None:
        self._store = shadow_store
        self._clock = clock
        self._config = config or AgentConfig()
        self._stop = stop or StopFlag()
        self._log = log
        self._observer = HostObserver(
            update_api, clock, self._stop, self._log, self._config.update_check_interval_seconds
        )
        self._steps = UpdateSteps(
            update_api,
            node_operations,
            clock,
            self._config,
            self._stop,
            self._log,
            still_wanted=self._reboot_still_wanted,
        )
        self._prestaging = Prestaging(self._steps, self._log)
        self._held: HeldUpdate | None = None  # what the host holds, once seen this run
        self._resource_version: str | None = None
        self._fresh: AgentShadow | None = None
        self._notes = TroubleNotes(self._log, self._config.loop_interval_seconds)

    # --- the loop -----------------------------------------------------------------------

    def run(self) -> AgentExit:
        """Tick until stopped, rebooting or fatally wrong; wait between ticks."""
        while True:
            outcome = self.tick()
            if isinstance(outcome, AgentExit):
                return outcome
            if outcome is Next.RETRY_LATER:
                self._stop.wait(self._clock, self._config.loop_interval_seconds)
                continue
            try:
                self._await_change()
            except Exception as error:  # a bug, not the cluster: retried like a failed tick
                self._notes.bug(error)
                self._stop.wait(self._clock, self._config.loop_interval_seconds)

    def tick(self) -> Next | AgentExit:
        """One pass: make sure the shadow and its status exist, act on drift, report."""
        try:
            outcome = self._tick()
        except StopRequested:
            return self._stopped()
        except RebootIssued:
            return AgentExit(ExitKind.REBOOTING)
        except FatalSpecError as error:
            self._log.error("agent.fatal", reason=str(error))
            return AgentExit(ExitKind.FATAL, str(error))
        except InvalidObjectError as error:  # the apiserver refused what was sent (422)
            self._notes.trouble("cluster.refused", error)
            return Next.RETRY_LATER
        except PortError as error:
            self._notes.trouble("cluster.unavailable", error)
            return Next.RETRY_LATER
        except Exception as error:  # a bug: the next tick starts again from the shadow
            self._notes.bug(error)
            return Next.RETRY_LATER
        self._notes.bug_over()
        return outcome

    def _stopped(self) -> AgentExit:
        self._log.info("agent.stopped", reason="stop requested (SIGTERM)")
        return AgentExit(ExitKind.STOPPED)

    def _await_change(self) -> None:
        """Long-poll the shadow (a stop cuts it short); trouble waits the loop interval."""
        config = self._config
        result = await_change(
            self._store, self._resource_version, config.shadow_wait_seconds, self._stop
        )
        if isinstance(result, PortError):
            self._notes.trouble("cluster.unavailable", result)
            self._stop.wait(self._clock, config.loop_interval_seconds)
        elif isinstance(result, Exception):
            raise result
        else:
            self._fresh = result

    # --- one tick -----------------------------------------------------------------------

    def _tick(self) -> Next:
        self._steps.checkpoint()
        shadow = self._load_shadow()
        if shadow.spec.state is UpdateState.ERROR_RESET:
            raise FatalSpecError(
                f"shadow {shadow.name}: the spec asks for ErrorReset, which only an agent may "
                "report; the controller or a person wrote an invalid spec"
            )
        try:
            seen = self._observer.observe(shadow.status)
        except HostApiError as error:
            self._stop_if_killed(error)
            self._notes.trouble("host.unreadable", error)
            return Next.RETRY_LATER
        status = shadow.status
        if status is None:
            status = initial_status(seen)
            shadow = self._report(shadow, status)
        spec = shadow.spec
        if spec.state is status.current_state or (
            status.current_state is UpdateState.ERROR_RESET and spec.state is not UpdateState.IDLE
        ):
            # Nothing asked for (or a crash the controller has yet to answer): between turns,
            # prepare ahead or unstage as the spec says; then report.
            if spec.state is UpdateState.IDLE and status.current_state is UpdateState.IDLE:
                self._held = self._prestaging.step(spec, status, STEP_FAILURES) or self._held
            self._report(shadow, status_refreshed(status, seen))
            outcome = Next.WAIT_FOR_CHANGE
        else:
            outcome = self._act(shadow, status, seen)
        self._notes.trouble_over()  # the shadow read, the host asked, the status taken
        return outcome

    def _load_shadow(self) -> AgentShadow:
        shadow, self._fresh = self._fresh, None
        if shadow is None:
            shadow = self._store.get()
        if shadow is None:
            shadow = self._store.create()
            self._log.info("shadow.created", shadow=shadow.name)
        self._resource_version = shadow.resource_version
        return shadow

    def _act(self, shadow: AgentShadow, status: AgentShadowStatus, seen: Observation) -> Next:
        spec = shadow.spec
        self._steps.checkpoint()
        self._log.info(
            "update.drift",
            desired_state=str(spec.state),
            current_state=str(status.current_state),
            version=spec.version,
        )
        try:
            self._take_action(spec, status, seen)
        except SpecWithdrawn:
            self._log.info("update.withdrawn", desired_state=str(spec.state), version=spec.version)
            return Next.WAIT_FOR_CHANGE
        except STEP_FAILURES as error:
            self._stop_if_killed(error)
            self._log.warning(
                "update.step_failed",
                desired_state=str(spec.state),
                error=type(error).__name__,
                reason=str(error),
            )
            latest = self._still_asked_for(spec)
            if latest is not None and latest.status is not None:
                self._report(latest, status_after_failure(latest.status, seen, self._clock.now()))
            return Next.RETRY_LATER
        latest = self._still_asked_for(spec)
        if latest is None:
            self._log.info("update.withdrawn", desired_state=str(spec.state), version=spec.version)
            if spec.state is UpdateState.STAGED_AND_PERFORMED_UPDATE:
                self._held = self._prestaging.unstage_after()  # activated for nothing
            return Next.WAIT_FOR_CHANGE
        reached = status_after_success(
            latest.status or status, spec.state, seen, asked_at=spec.state_transition_timestamp
        )
        self._report(latest, reached)
        return Next.WAIT_FOR_CHANGE

    def _still_asked_for(self, spec: AgentShadowSpec) -> AgentShadow | None:
        """The shadow as stored now, or None when the controller has asked for something else
        meanwhile. Reporting from this fresh copy keeps what the controller wrote into the status
        during a long step (a timeout's crash count) instead of overwriting it."""
        fresh = self._store.get()
        if fresh is None or (fresh.spec.state, fresh.spec.version) != (spec.state, spec.version):
            return None
        self._resource_version = fresh.resource_version
        return fresh

    def _reboot_still_wanted(self, version: str) -> bool:
        fresh = self._store.get()
        return (
            fresh is not None
            and fresh.spec.state is UpdateState.REBOOTED_INTO_UPDATE
            and fresh.spec.version == version
        )

    def _take_action(
        self, spec: AgentShadowSpec, status: AgentShadowStatus, seen: Observation
    ) -> None:
        desired = spec.state
        if desired is UpdateState.IDLE:
            if status.current_state in _MAY_BE_ACTIVATED:
                self._held = self._prestaging.unstage_after()
            if seen.boot_mode_changed_from is not None:
                self._log.warning("node.left_cordoned", reason="its boot mode changed")
            elif status.current_state not in _QUIET_STATES:
                self._steps.recover()
                self._log.info("node.recovered", from_state=str(status.current_state))
        elif desired is UpdateState.STAGED_AND_PERFORMED_UPDATE:
            self._held = held_update(self._steps.stage(_pinned_version(spec)))
        elif desired is UpdateState.REBOOTED_INTO_UPDATE:
            version = _pinned_version(spec)
            if same_version(seen.current_version, version):
                _check_boot_mode_kept(seen)
                self._steps.recover()
                self._log.info("node.updated", version=version)
            else:
                self._steps.reboot_into(version)
        elif desired is UpdateState.MONITORING_UPDATE:
            self._steps.recover()

    def _report(self, shadow: AgentShadow, status: AgentShadowStatus) -> AgentShadow:
        """Write `status` (with what the host holds) unless the shadow already holds it."""
        status = with_held_update(status, shadow.status, self._held)
        if shadow.status == status:
            return shadow
        stored = self._store.update_status(status)
        self._resource_version = stored.resource_version
        self._log.info(
            "status.reported",
            state=str(status.current_state),
            current_version=status.current_version,
            target_version=status.target_version,
            crash_count=status.crash_count,
        )
        return stored

    # --- failures -----------------------------------------------------------------------

    def _stop_if_killed(self, error: Exception) -> None:
        """apiclient killed while we were asked to stop: the host is going down, not a fault."""
        if isinstance(error, HostCommandKilledError) and self._stop.requested:
            raise StopRequested from error


def _check_boot_mode_kept(seen: Observation) -> None:
    """The post-reboot check: an update that changed the boot mode fails, and the node stays
    cordoned (its status says why; the controller never starts it again)."""
    former = seen.boot_mode_changed_from
    if former is not None:
        raise BootModeChangedError(describe_change(seen.boot_mode, former))


def _pinned_version(spec: AgentShadowSpec) -> str:
    if spec.version is None:
        raise VersionMismatchError(f"the spec asks for {spec.state} without naming a version")
    return spec.version

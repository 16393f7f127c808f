"""Prestaging: the agent's work while its node is Idle and not in its turn.

When the spec names a version to prepare ahead, the host prepares it (Staged, never activated)
with no cordon and no drain. When the spec names none and the host was left activated (Ready)
without rebooting, the activation is taken back (Ready -> Staged). A failed preparation is
logged once and not retried for that version: the node then prepares in its turn, as without
prestaging, and nothing counts as a crash.
"""

from __future__ import annotations

from brupop.domain.host.agent_shadow import AgentShadowSpec, AgentShadowStatus
from brupop.domain.host.host import HostUpdateState
from brupop.domain.host.prestage_steps import HeldUpdate, held_update
from brupop.services.agent.update_steps import UpdateSteps

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from brupop.services.agent.event_log import EventLog


class Prestaging:
    """Prepares ahead and unstages between turns; remembers the version that failed."""

    def __init__(self, steps: UpdateSteps, log: EventLog) -> None:
        self._steps = steps
        self._log = log
        self._failed: str | None = None

    def step(
        self,
        spec: AgentShadowSpec,
        status: AgentShadowStatus,
        failures: tuple[type[Exception], ...],
    ) -> HeldUpdate | None:
        """Do what an Idle node's spec asks of its host between turns; what the host holds
        afterwards, or None when nothing was done."""
        wanted = spec.prestage_version
        try:
            if wanted is not None and self._failed != wanted and not _holds(status, wanted):
                held = held_update(self._steps.prepare_ahead(wanted))
                if held[0] == wanted and status.staged_version != wanted:  # news, not a repeat
                    self._log.info("update.prestaged", version=wanted)
                return held
            if wanted is None and status.staged_state == HostUpdateState.READY.value:
                return self._unstage()
        except failures as error:
            self._steps.checkpoint()  # killed because the host is going down: stop here
            self._failed = wanted
            self._log.warning(
                "update.prestage_failed",
                version=wanted,
                error=type(error).__name__,
                reason=str(error),
                then="prepared in the node's turn",
            )
        return None

    def unstage_after(self) -> HeldUpdate:
        """Take back an activation the controller withdrew (the node sent back to Idle)."""
        return self._unstage()

    def _unstage(self) -> HeldUpdate:
        return held_update(self._steps.unstage())


def _holds(status: AgentShadowStatus, version: str) -> bool:
    return status.staged_version == version and status.staged_state == HostUpdateState.STAGED.value

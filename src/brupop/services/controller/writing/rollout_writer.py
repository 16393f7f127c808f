"""RolloutWriter: writes one pass's spec changes and tells their story (logs, Events, metrics).

Every spec write is conditional on the resourceVersion the decision was made from, so a
change made meanwhile (by an agent or another controller) turns into a ConflictError, that
shadow is read again and the pass decided again. A timeout is also recorded as a failure in the
status (crash count + 1, failure time now), so the node backs off before it is tried again;
that status write is conditional too, so it never reverts an agent's report made since the
read (the agent's status is the rest of what it writes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import structlog

from brupop.domain.cluster.objects import ClusterEvent, EventType
from brupop.domain.reporting.waiting_reason import GateFailureRecord, TimeoutRecord
from brupop.domain.rollout.rollout import ChangeKind, RolloutPlan, SpecChange, timed_out_spec
from brupop.domain.rollout.transition_timeout import is_timed_out, transition_deadline
from brupop.domain.safety.health_gate import in_gate
from brupop.domain.safety.reboot_hooks import HookDecision
from brupop.domain.shadow import CRASH_COUNT_MAX, Shadow, ShadowStatus
from brupop.domain.states import StateTimeouts, UpdateState
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.errors import ConflictError, NotFoundError
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics
from brupop.services.controller.writing.write_journal import WriteJournal


@dataclass
class WriteOutcome:
    """What a pass managed to write."""

    started: set[str] = field(default_factory=set)
    timed_out: dict[str, TimeoutRecord] = field(default_factory=dict)
    conflicts: int = 0
    written: int = 0
    stopped_leading: bool = False
    stored: list[Shadow] = field(default_factory=list)
    conflicted: list[str] = field(default_factory=list)
    gate_failed: dict[str, GateFailureRecord] = field(default_factory=dict)


class RolloutWriter:
    """Applies a RolloutPlan through the ShadowRepository, only while `may_write()`."""

    def __init__(
        self,
        shadows: ShadowRepository,
        events: EventRecorder,
        metrics: RolloutMetrics,
        timeouts: StateTimeouts,
        journal: WriteJournal,
    ) -> None:
        self._shadows = shadows
        self._events = events
        self._metrics = metrics
        self._timeouts = timeouts
        self._journal = journal
        self._log = structlog.get_logger(__name__)

    def forget_writes(self) -> None:
        """Wait on none of the writes made so far (this replica no longer leads)."""
        self._journal.forget()

    def writes_unseen(self, shown: Callable[[str], Shadow | None]) -> bool:
        """The mirror (`shown`: its shadow by name) still shows one of the writes made so far
        undone (its event is late)."""
        journal = self._journal
        return journal.is_stale(s for n in journal.names() if (s := shown(n)) is not None)

    def apply(
        self, plan: RolloutPlan, now: datetime, may_write: Callable[[], bool]
    ) -> WriteOutcome:
        """Write every change of `plan` that still applies; stop if leadership is lost."""
        outcome = WriteOutcome()
        for change in plan.changes:
            if not may_write():
                outcome.stopped_leading = True
                break
            try:
                if change.kind is ChangeKind.TIMEOUT:
                    self._time_out(change.shadow, now, outcome)
                else:
                    self._write(change, outcome)
            except ConflictError:
                outcome.conflicts += 1
                outcome.conflicted.append(change.shadow.name)
                self._log.debug("spec.changed_meanwhile", shadow=change.shadow.name)
            except NotFoundError:
                self._log.debug("spec.shadow_gone", shadow=change.shadow.name)
        return outcome

    def _write(self, change: SpecChange, outcome: WriteOutcome) -> None:
        shadow = change.shadow
        stored = self._shadows.replace_spec(shadow.name, change.spec, shadow.resource_version)
        self._journal.remember(shadow.name, shadow.resource_version)
        outcome.stored.append(stored)
        outcome.written += 1
        self._tell(change, outcome)

    def _tell(self, change: SpecChange, outcome: WriteOutcome) -> None:
        shadow, spec = change.shadow, change.spec
        log = self._log.bind(node=shadow.node_name, shadow=shadow.name)
        if change.kind is ChangeKind.START:
            outcome.started.add(shadow.name)
            self._metrics.count_attempt()
            log.info("update.started", version=spec.version)
            self._event(shadow, "UpdateStarted", f"Starting the update to {spec.version}")
        elif change.kind is ChangeKind.RECOVER:
            failed = shadow.spec.state
            crashes = shadow.status.crash_count if shadow.status else 0
            self._metrics.count_failure("agent_error", failed.value)
            log.warning("update.agent_failed", desired_state=failed.value, crash_count=crashes)
            self._event(
                shadow,
                "UpdateFailed",
                f"The agent failed on its way to {failed} (crash count {crashes}); back to Idle",
                EventType.WARNING,
            )
        elif change.kind is ChangeKind.ADVANCE:
            log.info(
                "update.advanced", from_state=shadow.spec.state.value, to_state=spec.state.value
            )
            if spec.state in _ADVANCED:
                reason, message = _ADVANCED[spec.state]
                self._event(shadow, reason, message.format(version=spec.version))
        else:
            log.debug("spec.cleared")

    def _time_out(self, listed: Shadow, now: datetime, outcome: WriteOutcome) -> None:
        """Record the failure in the status (once), then send the node back to Idle."""
        fresh = self._shadows.get(listed.name)
        deadline = transition_deadline(fresh, self._timeouts)
        if fresh.status is None or deadline is None or not is_timed_out(fresh, now, self._timeouts):
            return
        self._journal.remember(fresh.name, fresh.resource_version)
        version = fresh.resource_version
        state = fresh.spec.state
        failed_at = fresh.status.state_transition_failure_timestamp
        if failed_at is None or failed_at < deadline:
            failed_at = now
            failed = _failed(fresh.status, now)
            stored = self._shadows.update_status(fresh.name, failed, fresh.resource_version)
            version = stored.resource_version
            self._count_timeout(fresh, now)
        # Stamped with the failure's time (not now, when a conflict made this a retry), so the
        # spec says "back to Idle after that failure" and it is never counted again.
        stored = self._shadows.replace_spec(fresh.name, timed_out_spec(fresh, failed_at), version)
        outcome.stored.append(stored)
        outcome.written += 1
        limit = self._timeouts.for_state(state) or 0.0
        outcome.timed_out[fresh.name] = TimeoutRecord(state, limit, now)

    def fail_gate(self, listed: Shadow, failure: str, now: datetime) -> Shadow | None:
        """The node failed its health gate (`failure`: what failed, for the Event): record the
        failure in its status (one more crash, failed now) and send it back to Idle, stamped
        with the failure's time like a timeout. There is no rollback: it stays on the new
        version, and it is already back in service (the agent uncordoned it before reporting
        MonitoringUpdate). None when the node has left the gate meanwhile."""
        fresh = self._shadows.get(listed.name)
        if not in_gate(fresh):
            return None
        return self._fail(fresh, failure, now, "health_gate", "HealthGateFailed")

    def fail_hook(self, listed: Shadow, failure: str, now: datetime) -> Shadow | None:
        """A reboot hook did not answer in time: the node fails as on its gate, and is sent
        back to Idle, which returns it to service (the agent uncordons a node asked for Idle
        before its reboot). None when the node has left the state it was judged in."""
        fresh = self._shadows.get(listed.name)
        status = fresh.status
        if status is None or fresh.spec.state is not listed.spec.state:
            return None
        if status.current_state is not fresh.spec.state:
            return None
        return self._fail(fresh, failure, now, "reboot_hook", "RebootHookFailed")

    def _fail(
        self, fresh: Shadow, failure: str, now: datetime, reason: str, event: str
    ) -> Shadow | None:
        status = fresh.status
        if status is None:
            return None
        self._journal.remember(fresh.name, fresh.resource_version)
        stored = self._shadows.update_status(
            fresh.name, _failed(status, now), fresh.resource_version
        )
        stored = self._shadows.replace_spec(
            fresh.name, timed_out_spec(fresh, now), stored.resource_version
        )
        self._metrics.count_failure(reason, fresh.spec.state.value)
        self._log.warning(
            f"update.{reason}_failed",
            node=fresh.node_name,
            version=status.current_version,
            failure=failure,
        )
        self._event(
            fresh,
            event,
            f"{failure}; the node stays on {status.current_version} (no rollback) and is back "
            "in service",
            EventType.WARNING,
        )
        return stored

    def note_hooks_asked(self, shadow: Shadow, decision: HookDecision) -> None:
        """The controller labelled the Node: the phase's hooks are asked to act."""
        phase = decision.phase
        self._event(
            shadow,
            phase.event_reason,
            f"{phase.label}=true set; {decision.message}",
        )

    def note_gate_passed(self, shadow: Shadow, message: str) -> None:
        """The node passed its health gate and was let go Idle."""
        self._log.info("update.health_gate_passed", node=shadow.node_name)
        self._event(shadow, "HealthGatePassed", message)

    def note_quarantined(self, shadow: Shadow, why: str) -> None:
        """The controller set the shadow aside: it cannot judge it (`report_bounds`)."""
        self._log.warning("shadow.quarantined", node=shadow.node_name, reason=why)
        self._event(
            shadow,
            "ShadowQuarantined",
            f"Set aside, left as it is and counted against no one: {why}",
            EventType.WARNING,
        )

    def _count_timeout(self, shadow: Shadow, now: datetime) -> None:
        state = shadow.spec.state
        limit = self._timeouts.for_state(state) or 0.0
        reported = shadow.status.current_state.value if shadow.status else "-"
        self._metrics.count_failure("timeout", state.value)
        self._log.warning(
            "update.timed_out",
            node=shadow.node_name,
            desired_state=state.value,
            reported_state=reported,
            limit_seconds=limit,
        )
        self._event(
            shadow,
            "UpdateTimedOut",
            f"Did not reach {state} within {limit:.0f} s (still {reported}); "
            "counted as a failure and sent back to Idle",
            EventType.WARNING,
        )

    def _event(
        self, shadow: Shadow, reason: str, message: str, kind: EventType = EventType.NORMAL
    ) -> None:
        self._events.record(
            ClusterEvent(
                shadow_name=shadow.name,
                namespace=shadow.namespace,
                reason=reason,
                message=message,
                type=kind,
                uid=shadow.uid,  # the recorder need not read the shadow again to find it
            )
        )


# One Event per phase, so `kubectl describe brs` and `brupop status --timeline` tell each step.
_ADVANCED = {
    UpdateState.REBOOTED_INTO_UPDATE: (
        "UpdateRebooting",
        "Staged {version}; draining the node and rebooting into it",
    ),
    UpdateState.MONITORING_UPDATE: ("UpdateMonitoring", "Rebooted into {version}; monitoring it"),
    UpdateState.IDLE: ("UpdateCompleted", "Now running {version}"),
}


def _failed(status: ShadowStatus, now: datetime) -> ShadowStatus:
    """The agent's status with one more crash at `now`, every other field kept."""
    return status.model_copy(
        update={
            "crash_count": min(status.crash_count + 1, CRASH_COUNT_MAX),
            "state_transition_failure_timestamp": now,
        }
    )

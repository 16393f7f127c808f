"""A real cluster's rollout timeline: the controller's Events and the shadows' spec timestamps,
turned into the domain's transitions.

Each phase of an update is an Event the controller records on the shadow (UpdatePrestaging
while it prepares ahead of its turn, until UpdateStagedAhead or UpdatePrestageStopped;
UpdateStarted, UpdateRebooting, UpdateMonitoring, UpdateCompleted, and BeforeRebootHooks or
AfterRebootHooks when a reboot hook is asked to act; UpdateFailed, UpdateTimedOut and
RebootHookFailed for a failure, HealthGateFailed naming the failed check), a shadow's spec says
when its current phase began, and the update policy's status when the fleet halted (waiting
nodes are drawn halted from then on). A cluster keeps no record of when a drain ended, so the
reboot's bar includes the drain here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from brupop.cli.status.cluster_history import ClusterHistory, FleetMoment, ShadowEvent
from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.domain.reporting.rollout_timeline import (
    FleetMark,
    Phase,
    Timeline,
    Transition,
    build_timeline,
    halt_of,
    phase_for,
)
from brupop.domain.rollout.concurrency import ConcurrencyLimit, ConcurrencyLimitError
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState

EVENT_PHASES = {
    "UpdatePrestaging": Phase.STAGING_AHEAD,
    "UpdateStagedAhead": Phase.WAITING,
    "UpdatePrestageStopped": Phase.WAITING,
    "UpdateStarted": Phase.STAGING,
    "BeforeRebootHooks": Phase.HOOKS_BEFORE,
    "UpdateRebooting": Phase.REBOOT,
    "UpdateMonitoring": Phase.MONITORING,
    "AfterRebootHooks": Phase.HOOKS_AFTER,
    "UpdateCompleted": Phase.UPDATED,
}
FAILURE_EVENTS = frozenset({"UpdateFailed", "UpdateTimedOut", "RebootHookFailed"})
# A failure mark only: the node stays on the new version; its message names the check.
MARK_EVENTS = frozenset({"HealthGateFailed"})


@dataclass(frozen=True)
class _Moment:
    node: str
    at: datetime
    phase: Phase | None
    failure: str | None = None


@dataclass(frozen=True)
class ClusterTimeline:
    """The timeline, and the moment its second 0 stands for."""

    timeline: Timeline
    start: datetime


def cluster_timeline(history: ClusterHistory, now: datetime, limit: int | None) -> ClusterTimeline:
    """Every shadow's row from the first moment either source knows of, up to `now`."""
    moments = [m for event in history.events if (m := _from_event(event)) is not None]
    moments += [m for shadow in history.shadows if (m := _from_spec(shadow)) is not None]
    start = min((m.at for m in moments), default=now)
    transitions = [
        Transition(m.node, (m.at - start).total_seconds(), m.phase, m.failure) for m in moments
    ]
    nodes = sorted(shadow.node_name for shadow in history.shadows)
    marks = [FleetMark((m.at - start).total_seconds(), m.label) for m in history.fleet]
    timeline = build_timeline(
        nodes,
        transitions,
        end=(max(now, start) - start).total_seconds(),
        limit=limit,
        fleet_marks=marks,
        halted_at=min((mark.at for mark in marks), default=None),  # the fleet's one moment
    )
    return ClusterTimeline(timeline, start)


def policy_moments(policy: UpdatePolicy | None) -> tuple[FleetMoment, ...]:
    """The halt the update policy's status records, if any."""
    halt = halt_of(policy.status if policy is not None else None)
    return () if halt is None else (FleetMoment(*halt),)


def limit_of(text: str) -> int | None:
    """The controller's `max_concurrent_update` (from its `/status`); None: unlimited or
    unknown."""
    try:
        return ConcurrencyLimit.parse(text).maximum
    except ConcurrencyLimitError:
        return None


def _from_event(event: ShadowEvent) -> _Moment | None:
    if event.reason in FAILURE_EVENTS:
        return _Moment(event.node, event.at, Phase.BACKOFF, event.message or event.reason)
    if event.reason in MARK_EVENTS:
        return _Moment(event.node, event.at, None, event.message or event.reason)
    phase = EVENT_PHASES.get(event.reason)
    return None if phase is None else _Moment(event.node, event.at, phase)


def _from_spec(shadow: Shadow) -> _Moment | None:
    """The phase the shadow is in now, from when its spec last changed."""
    spec, status = shadow.spec, shadow.status
    if spec.state_transition_timestamp is None:
        return None
    on_target = (
        status is not None and spec.version is not None and status.current_version == spec.version
    )
    failing = status is not None and status.state_transition_failure_timestamp is not None
    phase = phase_for(spec.state, on_target=on_target, failing=failing)
    if phase is Phase.DRAIN:
        phase = Phase.REBOOT  # as the Events draw it: the drain is not told apart here
    if spec.state is UpdateState.IDLE and not on_target and not failing:
        return None  # a spec cleared back to Idle says nothing new
    return _Moment(shadow.node_name, spec.state_transition_timestamp, phase)

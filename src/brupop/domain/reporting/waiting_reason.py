"""Why each node is where it is: the REASON column of `brupop status` and the nodes-waiting
metric. Pure: computed from one list of shadows and what the controller knows of this pass."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from brupop.domain.boot_mode import describe_change
from brupop.domain.cluster.drain_progress import DrainProgress
from brupop.domain.host_kind import HostKind
from brupop.domain.policy.update_policy import NODE_PAUSED_LABEL, NODE_PAUSED_VALUE
from brupop.domain.printable import printable
from brupop.domain.reason import Explanation, Reason
from brupop.domain.reporting.staging_note import with_staging
from brupop.domain.rollout.backoff import is_retry_allowed, retry_allowed_at
from brupop.domain.rollout.concurrency import holds_slot
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.rollout.transition_timeout import is_timed_out, transition_deadline
from brupop.domain.shadow import Shadow, ShadowStatus
from brupop.domain.starting.start_holds import StartHold
from brupop.domain.states import UpdateState
from brupop.domain.versions import versions_differ
from brupop.domain.windows.maintenance_window import MaintenanceWindow, WindowKind

_NODE_PAUSED = f"{NODE_PAUSED_LABEL}={NODE_PAUSED_VALUE}"


@dataclass(frozen=True)
class TimeoutRecord:
    """A transition the controller cut short: the state not reached, its limit, when."""

    state: UpdateState
    limit_seconds: float
    at: datetime


@dataclass(frozen=True)
class GateFailureRecord:
    """A node the controller failed on its health gate: what failed, when."""

    message: str
    at: datetime


@dataclass(frozen=True)
class RolloutView:
    """What a pass knows beyond the shadows themselves."""

    now: datetime
    rollout_rules: RolloutRules
    window: MaintenanceWindow
    window_open: bool
    started: frozenset[str] = frozenset()
    drains: Mapping[str, DrainProgress] = field(default_factory=dict)
    timeouts: Mapping[str, TimeoutRecord] = field(default_factory=dict)
    paused: bool = False
    """The fleet is paused (`spec.paused` of the update policy)."""
    held_back: frozenset[str] = frozenset()
    """Shadows whose Node carries the pause label."""
    halted: str | None = None
    """Why the fleet is halted (the halt's message); None when it is not."""
    blocked: str | None = None
    """Why the alert gate holds every start; None when it does not."""
    soak: str | None = None
    """While the canaries have not soaked: what the other nodes wait for."""
    canaries: frozenset[str] = frozenset()
    """Shadows of the canary nodes (they do not wait for the soak)."""
    gate_holds: Mapping[str, Explanation] = field(default_factory=dict)
    """Shadows the health gate keeps in MonitoringUpdate, with their reason."""
    gate_failures: Mapping[str, GateFailureRecord] = field(default_factory=dict)
    """Shadows whose node failed its health gate recently."""
    schedule_hold: StartHold | None = None
    """The policy's clock rule (blackout, windows, finishBy) holding every start, and why."""
    start_holds: Mapping[str, StartHold] = field(default_factory=dict)
    """Ready shadows a start rule held in this pass (a budget, a pin, ...), with why."""
    quarantined: Mapping[str, str] = field(default_factory=dict)
    """Shadows the controller set aside because it cannot judge them, with why."""
    variants_behind: Mapping[str, str] = field(default_factory=dict)
    """Variants offered nothing past the grace period while others are, with the sentence."""


@dataclass(frozen=True)
class NodeReport:
    """One row of `brupop status` (the `kubectl get brs` columns plus the reason)."""

    node: str
    shadow: str
    state: str
    version: str
    target_state: str
    target_version: str
    crash_count: int | None
    reason: Reason
    detail: str

    def as_json(self) -> dict[str, Any]:
        """A plain dict for `/status` and `brupop status -o json`."""
        return {
            "node": self.node,
            "shadow": self.shadow,
            "state": self.state,
            "version": self.version,
            "target_state": self.target_state,
            "target_version": self.target_version,
            "crash_count": self.crash_count,
            "reason": self.reason.value,
            "detail": self.detail,
            "waiting": self.reason.is_waiting,
        }


def report(shadows: Iterable[Shadow], view: RolloutView) -> list[NodeReport]:
    """A row per shadow, ordered by node name."""
    listed = sorted(shadows, key=lambda s: s.node_name)
    held = len({s.name for s in listed if holds_slot(s)} | view.started)
    return [_row(shadow, explain(shadow, view, held=held)) for shadow in listed]


def explain(shadow: Shadow, view: RolloutView, *, held: int) -> Explanation:
    """The reason code and its sentence for one node; `held` counts slots after the pass. A
    shadow that cannot be judged or explained is QUARANTINED, never an error for the fleet."""
    why = view.quarantined.get(shadow.name)
    if why is None:
        try:
            return _explain(shadow, view, held=held)
        except Exception as error:  # a bug met this shadow: its row says so, the others stand
            why = f"cannot be explained: {type(error).__name__}: {error}"
    return Explanation(
        Reason.QUARANTINED, f"set aside, left as it is until its shadow is believable: {why}"
    )


def _explain(shadow: Shadow, view: RolloutView, *, held: int) -> Explanation:
    status = shadow.status
    if status is None:
        return Explanation(Reason.NO_STATUS, "the agent has not reported a status yet")
    if shadow.name in view.started:
        return Explanation(Reason.STARTING, f"starting the update to {status.target_version}")
    changed = status.boot_mode_changed_from
    if changed is not None:
        told = describe_change(status.boot_mode, changed)
        return Explanation(Reason.BOOT_MODE_CHANGED, f"{told}; not started again, left cordoned")
    if holds_slot(shadow):
        return _explain_in_slot(shadow, status, view)
    cannot = _cannot_update(status)
    if cannot is not None:
        return cannot
    if not versions_differ(status.current_version, status.target_version):
        behind = view.variants_behind.get(status.variant or "")
        if behind is not None:
            return Explanation(Reason.NO_OFFER_FOR_VARIANT, behind)
        failed = view.gate_failures.get(shadow.name)
        if failed is not None:
            return Explanation(
                Reason.NO_UPDATE,
                f"runs the version offered, but {failed.message} at {_when(failed.at)}",
            )
        return Explanation(Reason.NO_UPDATE, "no update offered")
    offered = f"{status.target_version} offered"
    if not is_retry_allowed(status, view.now):
        until = retry_allowed_at(status)
        record = view.timeouts.get(shadow.name)
        cause = f"; last failure: timed out in {record.state}" if record else ""
        return Explanation(
            Reason.BACKING_OFF,
            f"backing off until {_when(until)} (crash count {status.crash_count}){cause}",
        )
    if view.halted is not None:
        return Explanation(
            Reason.HALTED, f"fleet {view.halted}; `brupop resume` to go on; {offered}"
        )
    if view.paused:
        return Explanation(
            Reason.PAUSED, f"fleet paused (spec.paused of the update policy); {offered}"
        )
    if shadow.name in view.held_back:
        return Explanation(Reason.PAUSED, f"node paused (label {_NODE_PAUSED}); {offered}")
    if view.blocked is not None:
        return Explanation(Reason.ALERT_HOLD, f"held by the alert gate: {view.blocked}; {offered}")
    if view.soak is not None and shadow.name not in view.canaries:
        return Explanation(Reason.CANARY_SOAK, f"{view.soak}; {offered}")
    clock = clock_hold(view)
    if clock is not None:
        return Explanation(clock.reason, f"{clock.detail}; {offered}")
    hold = view.start_holds.get(shadow.name)
    if hold is not None:
        return Explanation(hold.reason, f"{hold.detail}; {offered}")
    limit = view.rollout_rules.limit
    if limit.maximum is not None and held >= limit.maximum:
        return Explanation(
            Reason.CONCURRENCY_FULL,
            f"concurrency full ({held}/{limit.maximum} nodes updating); {offered}",
        )
    return Explanation(Reason.READY, f"starts on the next pass; {offered}")


def _cannot_update(status: ShadowStatus) -> Explanation | None:
    """The host's own kind when it cannot take an update; None when it can (or is unknown)."""
    kind = status.host_kind
    if kind is None or kind.takes_updates:
        return None
    if kind is HostKind.NO_IN_PLACE_UPDATES:
        variant = f"variant {status.variant}" if status.variant else "its variant"
        note = f" ({status.host_note})" if status.host_note else ""
        return Explanation(
            Reason.NO_IN_PLACE_UPDATES, f"{variant} has no in-place updates{note}; not started"
        )
    note = f": {status.host_note}" if status.host_note else ""
    return Explanation(
        Reason.UNEXPECTED_HOST_ANSWER,
        f"the host answered as no Bottlerocket does{note}; not started",
    )


def _explain_in_slot(shadow: Shadow, status: ShadowStatus, view: RolloutView) -> Explanation:
    spec = shadow.spec
    record = view.timeouts.get(shadow.name)
    if is_timed_out(shadow, view.now, view.rollout_rules.timeouts):
        limit = view.rollout_rules.timeouts.for_state(spec.state)
        return Explanation(Reason.TIMED_OUT, f"timed out in {spec.state} (limit {limit:.0f} s)")
    if record is not None and spec.state is UpdateState.IDLE:
        return Explanation(
            Reason.TIMED_OUT,
            f"timed out in {record.state} (limit {record.limit_seconds:.0f} s) at "
            f"{_when(record.at)}; waiting for the agent to bring the node back to Idle",
        )
    failed = view.gate_failures.get(shadow.name)
    if failed is not None and spec.state is UpdateState.IDLE:
        return Explanation(
            Reason.UPDATING,
            f"{failed.message} at {_when(failed.at)}; waiting for the agent to report Idle",
        )
    if status.current_state is UpdateState.ERROR_RESET:
        return Explanation(
            Reason.CRASHED,
            f"the agent reported a failure (crash count {status.crash_count}); "
            "waiting for it to recover the node",
        )
    gate = view.gate_holds.get(shadow.name)
    if gate is not None:
        return gate
    drain = view.drains.get(shadow.name)
    if drain is not None and not drain.done:
        if drain.budgets:
            return Explanation(Reason.DRAIN_BLOCKED, f"drain blocked by {drain.describe()}")
        return Explanation(Reason.UPDATING, f"draining: {drain.describe()}")
    if status.current_state == spec.state:
        return Explanation(Reason.UPDATING, f"reached {spec.state}; moving on")
    deadline = transition_deadline(shadow, view.rollout_rules.timeouts)
    limit_text = f" (times out at {_when(deadline)})" if deadline else ""
    return Explanation(Reason.UPDATING, f"waiting for the agent to reach {spec.state}{limit_text}")


def clock_hold(view: RolloutView) -> Explanation | None:
    """What holds every start by the clock in `view`, and why: the policy's rule (a blackout,
    its windows, finishBy), else the environment's window when it is closed; None: neither."""
    if view.schedule_hold is not None:
        return Explanation(view.schedule_hold.reason, view.schedule_hold.detail)
    if not view.window_open:
        return Explanation(Reason.OUTSIDE_WINDOW, f"outside window ({_next_window(view)})")
    return None


def _next_window(view: RolloutView) -> str:
    opening = view.window.next_opening(view.now)
    if opening is None:
        return "no future window: the schedule has no fire time left"
    verb = "next window opens" if view.window.kind is WindowKind.WINDOWED else "next trigger"
    return f"{verb} at {_when(opening)}"


def _when(moment: datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment is not None else "-"


def _row(shadow: Shadow, why: Explanation) -> NodeReport:
    status = shadow.status
    return NodeReport(
        node=shadow.node_name,
        shadow=shadow.name,
        state=status.current_state.value if status else "",
        version=status.current_version if status else "",
        target_state=shadow.spec.state.value,
        target_version=shadow.spec.version or "",
        crash_count=status.crash_count if status else None,
        reason=why.reason,
        # REASON shows text from outside: no terminal controls
        detail=printable(with_staging(why.detail, shadow)),
    )

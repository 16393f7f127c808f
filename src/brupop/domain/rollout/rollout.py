"""The controller's rollout rules: each node's next desired spec, and one pass's plan.

`next_spec` keeps the original's rules (reference 3.5): a node that reached its desired state is
asked for the next one; a crashed node is sent back to Idle; an idle node that is offered a new
version starts when its backoff allows; a finished node has its spec cleared. Two changes: a
crashed node is sent back to Idle once (not re-stamped every pass), and a node stuck past its
state's timeout is sent back to Idle as a failure. `plan_rollout` decides a whole pass from one
consistent list of shadows: it never lets more nodes hold a slot than the limit allows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from brupop.domain.rollout.backoff import is_retry_allowed
from brupop.domain.rollout.concurrency import ConcurrencyLimit, slots_held
from brupop.domain.rollout.ordering import update_order
from brupop.domain.rollout.transition_timeout import is_timed_out
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus
from brupop.domain.states import StateTimeouts, UpdateState
from brupop.domain.versions import versions_differ

Chooser = Callable[[list[str], int], list[str]]
"""Picks the starts among the ready shadows' names (in start order) and the free slots
(`start_selection.StartSelection` is one); what `plan_rollout` and `RolloutBook.plan` call."""


class ChangeKind(StrEnum):
    """Why the controller rewrites a spec."""

    START = "start"
    ADVANCE = "advance"
    RECOVER = "recover"
    RESET = "reset"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class SpecChange:
    """Write `spec` on `shadow` (as listed, so a stale view meets a conflict)."""

    shadow: Shadow
    spec: ShadowSpec
    kind: ChangeKind


@dataclass(frozen=True)
class RolloutRules:
    """The controller's own knobs of a rollout, from its settings (the update policy's rules
    are `EffectivePolicy`): concurrency, per-state timeouts, the controller's own node."""

    limit: ConcurrencyLimit
    timeouts: StateTimeouts = field(default_factory=StateTimeouts)
    controller_node: str | None = None


@dataclass(frozen=True)
class RolloutPlan:
    """One pass: the spec changes to write, the slots held before it, the nodes ready."""

    changes: tuple[SpecChange, ...]
    slots_held: int
    ready: tuple[Shadow, ...]

    def started(self) -> tuple[str, ...]:
        """Names of the shadows this pass starts."""
        return tuple(c.shadow.name for c in self.changes if c.kind is ChangeKind.START)


def next_spec(shadow: Shadow, now: datetime) -> ShadowSpec:
    """The spec the node should carry next (equal to the current one when nothing changes)."""
    status, spec = shadow.status, shadow.spec
    if status is None:
        return ShadowSpec()
    if status.current_state != spec.state:
        if status.current_state is UpdateState.ERROR_RESET and spec.state is not UpdateState.IDLE:
            return _stamped(UpdateState.IDLE, spec.version, now)
        return spec
    if spec.state is UpdateState.IDLE:
        if not offered_an_update(status):
            return ShadowSpec()
        if is_retry_allowed(status, now):
            return _stamped(UpdateState.STAGED_AND_PERFORMED_UPDATE, status.target_version, now)
        return spec
    return _stamped(spec.state.on_success(), spec.version, now)


def offered_an_update(status: ShadowStatus) -> bool:
    """The host offers another version and can take it (a host that cannot update in place,
    answers oddly, or came back from an update in another boot mode is never started,
    whatever its status says it is offered)."""
    takes = status.host_kind is None or status.host_kind.takes_updates
    kept_mode = status.boot_mode_changed_from is None
    return takes and kept_mode and versions_differ(status.current_version, status.target_version)


def is_ready_to_start(shadow: Shadow, now: datetime) -> bool:
    """Idle, offered a new version, and not backing off: it only needs a slot and a window."""
    return (
        shadow.spec.state is UpdateState.IDLE
        and next_spec(shadow, now).state is UpdateState.STAGED_AND_PERFORMED_UPDATE
    )


def ready_to_start(shadows: Iterable[Shadow], now: datetime, rules: RolloutRules) -> list[Shadow]:
    """The nodes ready to start, in the order they get slots."""
    ready = [s for s in shadows if is_ready_to_start(s, now)]
    return update_order(ready, rules.controller_node)


def timed_out_spec(shadow: Shadow, failed_at: datetime) -> ShadowSpec:
    """Back to Idle, keeping the version, stamped with the failure's time (which marks the node
    as returning after a counted failure: see `transition_timeout`)."""
    return _stamped(UpdateState.IDLE, shadow.spec.version, failed_at)


def plan_rollout(
    shadows: Iterable[Shadow],
    now: datetime,
    rules: RolloutRules,
    *,
    may_start: bool,
    held_back: frozenset[str] = frozenset(),
    choose: Chooser | None = None,
) -> RolloutPlan:
    """Decide one pass over a consistent list of shadows.

    Nodes already in a slot move on (or are sent back on a crash or a timeout) whatever the
    window or a pause says; new nodes start only when `may_start` (the window is open and the
    fleet is not paused), only into free slots, and never a shadow named in `held_back` (its
    node is paused). `choose`, when given, picks the starts among the ready names and the
    free slots (as `RolloutBook.plan` does with it).
    """
    listed = list(shadows)
    changes = [change for shadow in listed if (change := _progress(shadow, now, rules))]
    held = slots_held(listed)
    ready = [s for s in ready_to_start(listed, now, rules) if s.name not in held_back]
    if may_start:
        free = rules.limit.free_slots(held, wanted=len(ready))
        chosen = ready[:free]
        if choose is not None and free:
            by_name = {s.name: s for s in ready}
            chosen = [by_name[n] for n in choose([s.name for s in ready], free)]
        changes += [SpecChange(s, next_spec(s, now), ChangeKind.START) for s in chosen]
    return RolloutPlan(changes=tuple(changes), slots_held=held, ready=tuple(ready))


def _progress(shadow: Shadow, now: datetime, rules: RolloutRules) -> SpecChange | None:
    """The change for a node that needs no slot decision, if any."""
    if is_timed_out(shadow, now, rules.timeouts):
        return SpecChange(shadow, timed_out_spec(shadow, now), ChangeKind.TIMEOUT)
    wanted = next_spec(shadow, now)
    if wanted == shadow.spec or is_ready_to_start(shadow, now):
        return None
    if shadow.has_crashed():
        kind = ChangeKind.RECOVER
    elif shadow.status is None or shadow.spec.state is UpdateState.IDLE:
        kind = ChangeKind.RESET
    else:
        kind = ChangeKind.ADVANCE
    return SpecChange(shadow, wanted, kind)


def _stamped(state: UpdateState, version: str | None, now: datetime) -> ShadowSpec:
    return ShadowSpec(state=state, state_transition_timestamp=now, version=version)

"""One shadow's decision: what the controller would do with it now, computed once per change.

`decide` applies the same rules as `rollout.next_spec` and `rollout.plan_rollout` (a reached
state moves on, a crash goes back to Idle once, a transition past its timeout goes back to Idle,
an idle node offered a version is ready once its backoff ended, a finished node's spec is
cleared), but returns a small value instead of a pydantic spec. It also says until when the
decision holds (`recheck_at`): the end of a backoff or a transition's deadline, so that a
decision kept from an earlier pass is recomputed the moment time alone would change it.
Everything that depends on the whole fleet (slots, window, order) is left to the caller.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from brupop.domain.backoff import retry_allowed_at
from brupop.domain.rollout import ChangeKind
from brupop.domain.shadow import Shadow, ShadowSpec
from brupop.domain.states import StateTimeouts, UpdateState
from brupop.domain.transition_timeout import transition_deadline
from brupop.domain.versions import versions_differ

_IDLE = UpdateState.IDLE
_STAGED = UpdateState.STAGED_AND_PERFORMED_UPDATE
_ERROR_RESET = UpdateState.ERROR_RESET


class Target(NamedTuple):
    """The spec to write: a state and version, stamped at write time (or the cleared spec)."""

    state: UpdateState
    version: str | None
    stamped: bool

    def spec(self, now: datetime) -> ShadowSpec:
        """The spec itself, stamped `now` when the state changes."""
        if not self.stamped:
            return ShadowSpec()
        return ShadowSpec(state=self.state, state_transition_timestamp=now, version=self.version)


CLEARED = Target(_IDLE, None, stamped=False)


class Decision(NamedTuple):
    """What one shadow needs, independent of the rest of the fleet.

    `change` is a spec change that needs no slot (advance, recover, reset, timeout); `ready`
    means the node waits only for a free slot and an open window (`target` is then its start);
    `recheck_at` is when time alone may change this decision (None: only a change of the
    shadow can). A named tuple: the controller builds and compares one per shadow per
    resync, and a tuple is several times cheaper than a frozen dataclass at that."""

    holds_slot: bool
    change: ChangeKind | None = None
    target: Target | None = None
    ready: bool = False
    recheck_at: datetime | None = None


def decide(shadow: Shadow, now: datetime, timeouts: StateTimeouts) -> Decision:
    """The decision for `shadow` at `now`."""
    status, spec = shadow.status, shadow.spec
    holds = spec.state is not _IDLE or (status is not None and status.current_state is not _IDLE)
    if status is None:
        return _clear(shadow, holds)
    deadline = transition_deadline(shadow, timeouts)
    if deadline is not None and now > deadline:
        return Decision(holds, ChangeKind.TIMEOUT, Target(_IDLE, spec.version, stamped=True))
    current = status.current_state
    if current != spec.state:
        if current is _ERROR_RESET and spec.state is not _IDLE:
            return Decision(holds, ChangeKind.RECOVER, Target(_IDLE, spec.version, stamped=True))
        return Decision(holds, recheck_at=deadline)
    if spec.state is _IDLE:
        if not versions_differ(status.current_version, status.target_version):
            return _clear(shadow, holds)
        allowed_at = retry_allowed_at(status)
        if allowed_at is None or now >= allowed_at:
            start = Target(_STAGED, status.target_version, stamped=True)
            return Decision(holds, target=start, ready=True)
        return Decision(holds, recheck_at=allowed_at)
    kind = ChangeKind.RECOVER if current is _ERROR_RESET else ChangeKind.ADVANCE
    return Decision(holds, kind, Target(spec.state.on_success(), spec.version, stamped=True))


def _clear(shadow: Shadow, holds: bool) -> Decision:
    """Nothing left to do: clear the spec unless it is already clear."""
    spec = shadow.spec
    if spec.state is _IDLE and spec.version is None and spec.state_transition_timestamp is None:
        return Decision(holds)
    kind = ChangeKind.RECOVER if shadow.has_crashed() else ChangeKind.RESET
    return Decision(holds, kind, CLEARED)

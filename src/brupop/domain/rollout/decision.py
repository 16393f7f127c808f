"""One shadow's decision: what the controller would do with it now, computed once per change.

`decide` applies the same rules as `rollout.next_spec` and `rollout.plan_rollout` (a reached
state moves on, a crash goes back to Idle once, a transition past its timeout goes back to Idle,
an idle node offered a version is ready once its backoff ended, a finished node's spec is
cleared), but returns a small value instead of a pydantic spec, and reads the shadow's `ShadowFacts`
(taken once per change of the shadow) instead of the pydantic model. It also says until when the
decision holds (`recheck_at`): the end of a backoff or a transition's deadline, so that a
decision kept from an earlier pass is recomputed the moment time alone would change it.
Everything that depends on the whole fleet (slots, window, order) is left to the caller.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from brupop.domain.rollout.rollout import ChangeKind
from brupop.domain.rollout.shadow_facts import ShadowFacts
from brupop.domain.shadow import ShadowSpec
from brupop.domain.states import UpdateState

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


def decide(facts: ShadowFacts, now: datetime) -> Decision:
    """The decision for the shadow `facts` were taken from, at `now`."""
    holds, spec_state = facts.holds_slot, facts.spec_state
    current = facts.current_state
    if current is None:
        return _clear(facts, holds)
    deadline = facts.deadline
    if deadline is not None and now > deadline:
        return Decision(holds, ChangeKind.TIMEOUT, Target(_IDLE, facts.spec_version, stamped=True))
    if current != spec_state:
        if current is _ERROR_RESET and spec_state is not _IDLE:
            return Decision(holds, ChangeKind.RECOVER, Target(_IDLE, facts.spec_version, True))
        return Decision(holds, recheck_at=deadline)
    if spec_state is _IDLE:
        if not facts.offered:
            return _clear(facts, holds)
        allowed_at = facts.allowed_at
        if allowed_at is None or now >= allowed_at:
            start = Target(_STAGED, facts.target_version, stamped=True)
            return Decision(holds, target=start, ready=True)
        return Decision(holds, recheck_at=allowed_at)
    kind = ChangeKind.RECOVER if current is _ERROR_RESET else ChangeKind.ADVANCE
    return Decision(holds, kind, Target(spec_state.on_success(), facts.spec_version, True))


def _clear(facts: ShadowFacts, holds: bool) -> Decision:
    """Nothing left to do: clear the spec unless it is already clear."""
    if facts.spec_clear:
        return Decision(holds)
    kind = ChangeKind.RECOVER if facts.current_state is _ERROR_RESET else ChangeKind.RESET
    return Decision(holds, kind, CLEARED)

"""ShadowFacts: the few facts of one shadow that its decision reads, taken once per change.

A pass that decides many shadows again (a full recomputation, the deadlines of a fleet that
all passed at once) would otherwise read the spec and status of each pydantic model: several
objects per shadow, allocated at different moments between Nodes, pods and Events, so that at
10,000 shadows they no longer fit in the processor's cache and every shadow costs about twice
what it costs at 1,000 (docs/bench.md, section 2). A named tuple of plain values, made when
the shadow enters or changes in the rollout book, is one small object read in one place.
Everything in it depends only on the shadow and on the state timeouts (fixed for the book's
life), so the moments a decision compares against the clock (a transition's deadline, the end
of a backoff) are computed here once too.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from brupop.domain.rollout.backoff import retry_allowed_at
from brupop.domain.rollout.rollout import offered_an_update
from brupop.domain.rollout.transition_timeout import transition_deadline
from brupop.domain.shadow import Shadow
from brupop.domain.states import StateTimeouts, UpdateState

_IDLE = UpdateState.IDLE


class ShadowFacts(NamedTuple):
    """What `decision.decide` and the rollout book read of one shadow.

    `current_state` is None while the agent has not reported (no status; the versions are
    then empty and `crash_count` 0)."""

    name: str
    node_name: str
    current_state: UpdateState | None
    current_version: str
    target_version: str
    crash_count: int
    spec_state: UpdateState
    spec_version: str | None
    spec_clear: bool
    """The spec is the cleared one (Idle, no version, no stamp)."""
    offered: bool
    """The agent is offered a version other than the one it runs."""
    holds_slot: bool
    deadline: datetime | None
    """When the current transition times out (`transition_timeout.transition_deadline`)."""
    allowed_at: datetime | None
    """When the node may start again after a failure (`backoff.retry_allowed_at`)."""

    @classmethod
    def of(cls, shadow: Shadow, timeouts: StateTimeouts) -> ShadowFacts:
        """The facts of `shadow`, its deadline under `timeouts`."""
        status, spec = shadow.status, shadow.spec
        spec_clear = (
            spec.state is _IDLE and spec.version is None and spec.state_transition_timestamp is None
        )
        if status is None:
            return cls(
                shadow.name, shadow.node_name, None, "", "", 0, spec.state, spec.version,
                spec_clear, offered=False, holds_slot=spec.state is not _IDLE,
                deadline=None, allowed_at=None,
            )  # fmt: skip
        current = status.current_state
        return cls(
            shadow.name, shadow.node_name, current, status.current_version,
            status.target_version, status.crash_count, spec.state, spec.version, spec_clear,
            offered=offered_an_update(status),
            holds_slot=spec.state is not _IDLE or current is not _IDLE,
            deadline=transition_deadline(shadow, timeouts),
            allowed_at=retry_allowed_at(status),
        )  # fmt: skip

    @classmethod
    def set_aside(cls, shadow: Shadow) -> ShadowFacts:
        """The facts of a quarantined shadow: only whether it holds a slot (its spec or its
        reported state outside Idle), read without any instant or version of its status."""
        status, spec = shadow.status, shadow.spec
        outside = spec.state is not _IDLE or (
            status is not None and status.current_state is not _IDLE
        )
        return cls(
            shadow.name, shadow.node_name, None, "", "", 0, spec.state, spec.version,
            spec_clear=False, offered=False, holds_slot=outside, deadline=None, allowed_at=None,
        )  # fmt: skip

"""The rollout timeline: each node's phases over time, and the fleet's nodes in flight.

Built from a sequence of observed transitions (a node entered a phase, or failed, at a moment
counted in seconds from the timeline's start), whatever observed them: the simulator's watch,
or a real cluster's shadows and Events. Phases a source cannot see are simply never entered;
the hook and gate phases are here so a controller that has them only needs to report them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.states import UpdateState

MAX_ROWS = 500  # `brupop simulate --nodes` allows as many; a bigger picture is unreadable
MAX_TRANSITIONS = 100_000
MAX_FLEET_MARKS = 50


class Phase(StrEnum):
    """What a node is doing; the values are the picture's legend."""

    WAITING = "waiting"
    STAGING = "staging"
    STAGING_AHEAD = "staging ahead"  # preparing before its turn: no cordon, no slot held
    HOOKS_BEFORE = "before-reboot hooks"
    DRAIN = "drain"
    REBOOT = "reboot"
    HOOKS_AFTER = "after-reboot hooks"
    MONITORING = "monitoring"
    GATE = "health gate"
    BACKOFF = "backoff"
    HALTED = "halted"  # waiting, with the fleet halted: nothing starts until a resume
    UPDATED = "updated"
    UPDATING = "expected update"  # brupop plan: one span for the whole update, not its phases

    @property
    def in_flight(self) -> bool:
        """The node holds one of the rollout's slots (it counts against the limit)."""
        return self not in _AT_REST


_AT_REST = frozenset(
    {Phase.WAITING, Phase.STAGING_AHEAD, Phase.BACKOFF, Phase.HALTED, Phase.UPDATED}
)


@dataclass(frozen=True)
class Transition:
    """At `at` seconds, `node` entered `phase` (None: no change), or failed (`failure`)."""

    node: str
    at: float
    phase: Phase | None = None
    failure: str | None = None


@dataclass(frozen=True)
class Span:
    """One phase of one node, from `start` to `end` seconds."""

    phase: Phase
    start: float
    end: float


@dataclass(frozen=True)
class FailureMark:
    """A failure of one node at `at` seconds, with the reason a person reads."""

    at: float
    reason: str


@dataclass(frozen=True)
class FleetMark:
    """A moment of the whole fleet at `at` seconds: halted, paused, resumed."""

    at: float
    label: str


@dataclass(frozen=True)
class NodeRow:
    """One row of the picture."""

    node: str
    spans: tuple[Span, ...]
    failures: tuple[FailureMark, ...]


@dataclass(frozen=True)
class Timeline:
    """Every node's row, the run's length, the concurrency limit and the fleet in flight."""

    rows: tuple[NodeRow, ...]
    end: float
    limit: int | None  # None: unlimited, or not known
    in_flight: tuple[tuple[float, int], ...]  # steps: from each moment, so many in flight
    omitted_nodes: int = 0
    fleet_marks: tuple[FleetMark, ...] = ()

    @property
    def most_in_flight(self) -> int:
        return max((count for _, count in self.in_flight), default=0)


class Halted(NamedTuple):
    """When the fleet halted, and a label naming why."""

    at: datetime
    label: str


def halt_of(status: UpdatePolicyStatus | None) -> Halted | None:
    """When the update policy's status says the fleet halted, and a label naming why."""
    if status is None or status.halted_at is None:
        return None
    reason = status.halt_reason
    why = f": {reason.node} failed {reason.check}" if reason is not None else ""
    return Halted(status.halted_at, f"fleet halted{why}")


def phase_for(desired: UpdateState, *, on_target: bool, failing: bool) -> Phase:
    """The phase a shadow's desired state stands for (the reboot's drain comes first)."""
    if desired is UpdateState.IDLE or desired is UpdateState.ERROR_RESET:
        if on_target:
            return Phase.UPDATED
        return Phase.BACKOFF if failing else Phase.WAITING
    return _WORKING[desired]


_WORKING = {
    UpdateState.STAGED_AND_PERFORMED_UPDATE: Phase.STAGING,
    UpdateState.REBOOTED_INTO_UPDATE: Phase.DRAIN,
    UpdateState.MONITORING_UPDATE: Phase.MONITORING,
}


def build_timeline(
    nodes: Sequence[str],
    transitions: Iterable[Transition],
    *,
    end: float,
    limit: int | None,
    fleet_marks: Iterable[FleetMark] = (),
    halted_at: float | None = None,
) -> Timeline:
    """Rows for `nodes` (and any other node a transition names), each from 0 to `end`; from
    `halted_at` on (the fleet halted), a waiting node is drawn `halted`.

    Every node starts waiting; a transition (or a fleet mark) outside 0..end is
    clamped into it, and one that repeats the current phase changes nothing.
    """
    end = max(0.0, end)
    by_node: dict[str, list[Transition]] = {name: [] for name in nodes}
    for count, transition in enumerate(transitions):
        if count >= MAX_TRANSITIONS:
            break
        by_node.setdefault(transition.node, []).append(transition)
    names = list(by_node)
    kept = names[:MAX_ROWS]
    rows = tuple(_row(name, by_node[name], end) for name in kept)
    if halted_at is not None:
        halt = min(max(halted_at, 0.0), end)
        rows = tuple(replace(row, spans=_halted_from(halt, row.spans)) for row in rows)
    return Timeline(
        rows=rows,
        end=end,
        limit=limit,
        in_flight=_in_flight(rows),
        omitted_nodes=len(names) - len(kept),
        fleet_marks=tuple(
            sorted(
                (FleetMark(min(max(mark.at, 0.0), end), mark.label) for mark in fleet_marks),
                key=lambda mark: mark.at,
            )[:MAX_FLEET_MARKS]
        ),
    )


def _row(node: str, seen: list[Transition], end: float) -> NodeRow:
    spans: list[Span] = []
    failures: list[FailureMark] = []
    phase, since = Phase.WAITING, 0.0
    for transition in sorted(seen, key=lambda t: t.at):
        at = min(max(transition.at, 0.0), end)
        if transition.failure is not None:
            failures.append(FailureMark(at, transition.failure))
        if transition.phase is None or transition.phase is phase:
            continue
        if at > since:
            spans.append(Span(phase, since, at))
        phase, since = transition.phase, at
    if end > since or not spans:
        spans.append(Span(phase, since, end))
    return NodeRow(node, tuple(spans), tuple(failures))


def _halted_from(halt: float, spans: Sequence[Span]) -> tuple[Span, ...]:
    """The spans, with the part of each waiting span after `halt` turned `halted`."""
    out: list[Span] = []
    for span in spans:
        if span.phase is not Phase.WAITING or span.end <= halt:
            out.append(span)
            continue
        if span.start < halt:
            out.append(Span(Phase.WAITING, span.start, halt))
        out.append(Span(Phase.HALTED, max(span.start, halt), span.end))
    return tuple(out)


def _in_flight(rows: Sequence[NodeRow]) -> tuple[tuple[float, int], ...]:
    """The step function of how many nodes are in flight, from 0 on."""
    changes: dict[float, int] = {0.0: 0}
    for row in rows:
        for span in row.spans:
            if span.phase.in_flight and span.end > span.start:
                changes[span.start] = changes.get(span.start, 0) + 1
                changes[span.end] = changes.get(span.end, 0) - 1
    steps: list[tuple[float, int]] = []
    count = 0
    for at in sorted(changes):
        count += changes[at]
        if steps and steps[-1][1] == count:
            continue
        steps.append((at, count))
    return tuple(steps)

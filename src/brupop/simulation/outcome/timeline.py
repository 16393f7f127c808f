"""The simulated rollout's timeline: the observer's shadow changes and the agents' exits, turned
into the domain's transitions.

The shadows tell when each desired state was asked for and when a failure was counted; the
reboot inside RebootedIntoUpdate (after the drain) is the agent's own exit, which only the
supervisor sees. The fleet's moments are the `--pause-at`/`--resume-at` writes and the halt the
update policy's status records at the end of the run.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Protocol

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
from brupop.domain.states import UpdateState
from brupop.ports.errors import NotFoundError
from brupop.simulation.fleet.observer import NodeView, NodeViewChange
from brupop.simulation.fleet.supervisor import AgentProcessExit, AgentView, ExitCause
from brupop.simulation.scenarios.pause_schedule import PauseMoment


def simulated_timeline(
    nodes: Sequence[str],
    history: Sequence[NodeViewChange],
    agents: Mapping[str, AgentView],
    *,
    started_at: float,
    ended_at: float,
    to_version: str,
    limit: int | None,
    fleet_marks: Sequence[FleetMark] = (),
    halted_at: float | None = None,
    gate_failures: Mapping[str, Sequence[str]] | None = None,
) -> Timeline:
    """The timeline of one run, in seconds from `started_at` (both times time.monotonic());
    `halted_at` in seconds of the run, `gate_failures` each node's HealthGateFailed messages."""
    transitions = shadow_transitions(history, started_at, to_version)
    transitions = named_gate_failures(transitions, gate_failures or {})
    transitions += reboot_transitions(transitions, agents, started_at)
    end = ended_at - started_at
    return build_timeline(
        nodes, transitions, end=end, limit=limit, fleet_marks=fleet_marks, halted_at=halted_at
    )


def named_gate_failures(
    transitions: Sequence[Transition], gate_failures: Mapping[str, Sequence[str]]
) -> list[Transition]:
    """A failure in monitoring is the health gate's: each takes, in order, the message of the
    node's next HealthGateFailed Event, which names the failed check."""
    left = {node: list(messages) for node, messages in gate_failures.items()}
    named = []
    for transition in sorted(transitions, key=lambda t: t.at):
        messages = left.get(transition.node)
        failure = transition.failure or ""
        if messages and failure.startswith(f"timed out in {Phase.MONITORING}"):
            transition = replace(transition, failure=messages.pop(0))
        named.append(transition)
    return named


def pause_marks(moments: Sequence[PauseMoment]) -> list[FleetMark]:
    """`--pause-at` and `--resume-at`, when their write to the policy was done."""
    return [
        FleetMark(moment.written_at, "fleet paused" if moment.paused else "fleet resumed")
        for moment in moments
    ]


class PolicyReader(Protocol):
    def get(self) -> UpdatePolicy: ...


def halt_marks(policies: PolicyReader, started_on: datetime | None) -> list[FleetMark]:
    """The fleet's halt, if the update policy's status records one, in seconds of the run."""
    try:
        status = policies.get().status
    except NotFoundError:  # no policy object: nothing can have halted the fleet
        return []
    halt = halt_of(status)
    if halt is None or started_on is None:
        return []
    return [FleetMark((halt.at - started_on).total_seconds(), halt.label)]


def shadow_transitions(
    history: Sequence[NodeViewChange], started_at: float, to_version: str
) -> list[Transition]:
    """A transition for every change of a node's phase, and for every failure counted."""
    transitions = []
    for change in history:
        after = change.after
        failure = _failure(change.before, after)
        phase = _phase(after, to_version)
        if failure is not None or phase is not _phase(change.before, to_version):
            transitions.append(Transition(after.node, change.at - started_at, phase, failure))
    return transitions


def reboot_transitions(
    transitions: Sequence[Transition], agents: Mapping[str, AgentView], started_at: float
) -> list[Transition]:
    """The reboot begins when the agent of a draining node goes down on its own."""
    reboots = []
    for node, agent in agents.items():
        own = sorted((t.at, t.phase) for t in transitions if t.node == node and t.phase)
        moments = [at for at, _ in own]
        for ended in agent.exits:
            at = ended.ended_at - started_at
            index = bisect_right(moments, at) - 1
            if _rebooted(ended) and index >= 0 and own[index][1] is Phase.DRAIN:
                reboots.append(Transition(node, at, Phase.REBOOT))
    return reboots


def _rebooted(ended: AgentProcessExit) -> bool:
    """A clean exit the harness did not cause: the agent's way out when its host reboots."""
    return ended.cause is ExitCause.ON_ITS_OWN and ended.code == 0


def _phase(view: NodeView, to_version: str) -> Phase:
    if view.spec_state is None:
        return Phase.WAITING
    if view.preparing_ahead and view.spec_state is UpdateState.IDLE:
        return Phase.STAGING_AHEAD
    return phase_for(
        view.spec_state,
        on_target=view.current_version == to_version,
        failing=view.failing_since is not None,
    )


def _failure(before: NodeView, after: NodeView) -> str | None:
    if after.crash_count <= before.crash_count:
        return None
    state = after.spec_state if after.spec_state is not UpdateState.IDLE else before.spec_state
    where = phase_for(state, on_target=False, failing=False) if state else Phase.WAITING
    if after.status_state is UpdateState.ERROR_RESET:
        return f"agent failed in {where} (crash count {after.crash_count})"
    return f"timed out in {where} (crash count {after.crash_count})"

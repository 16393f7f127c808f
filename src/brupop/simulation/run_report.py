"""What a finished run reports: each node's outcome and the run's facts, judged into the
SimulationReport, and the timeline that --timeline draws.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from brupop.domain.reporting.rollout_timeline import Timeline
from brupop.domain.shadow import shadow_name
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.fleet.observer import active_intervals
from brupop.simulation.fleet_wait import WaitEnd
from brupop.simulation.outcome.agent_logs import count_tracebacks
from brupop.simulation.outcome.node_outcome import node_outcome
from brupop.simulation.outcome.report import NodeOutcome, RunFacts, SimulationReport, judge
from brupop.simulation.outcome.timeline import (
    halt_marks,
    pause_marks,
    simulated_timeline,
)
from brupop.simulation.run_setup import StartedRun
from brupop.simulation.scenarios.chaos import ChaosMonkey
from brupop.simulation.scenarios.pause_schedule import policy_halt, policy_phase


def run_timeline(run: StartedRun, options: SimulationOptions, duration: float) -> Timeline:
    halts = halt_marks(run.cluster.policies, _started_on_without_steps(run))
    return simulated_timeline(
        run.names,
        run.observer.history(),
        run.supervisor.views(),
        started_at=run.started_at,
        ended_at=run.started_at + duration,
        to_version=options.to_version,
        limit=options.limit_in_force,
        fleet_marks=pause_marks(run.pauses.moments) + halts,
        halted_at=halts[0].at if halts else None,
        gate_failures=_gate_failures(run),
    )


def _gate_failures(run: StartedRun) -> dict[str, list[str]]:
    """Each node's HealthGateFailed messages, in the order the controller recorded them."""
    nodes = {shadow_name(name): name for name in run.names}
    failures: dict[str, list[str]] = {}
    for event in run.cluster.events.recorded:
        if event.reason == "HealthGateFailed" and event.shadow_name in nodes:
            failures.setdefault(nodes[event.shadow_name], []).append(event.message)
    return failures


def run_report(
    run: StartedRun,
    chaos: ChaosMonkey,
    options: SimulationOptions,
    ended: WaitEnd,
    duration: float,
) -> SimulationReport:
    nodes = _node_outcomes(run, chaos, options)
    return judge(
        RunFacts(
            duration_seconds=duration,
            max_concurrent_allowed=options.limit_in_force,
            max_concurrent_observed=run.observer.max_active,
            tracebacks=count_tracebacks(run.log_dir / f"{n}.log" for n in run.names),
            nodes=nodes,
            from_version=options.from_version,
            to_version=options.to_version,
            timed_out=ended.timed_out,
            interrupted=ended.interrupted,
            chaos_kills_sent=len(chaos.kills),
            controller_restarts=run.controller.restarts,
            log_dir=str(run.log_dir),
            policy_phase=policy_phase(run.cluster, len(run.fleet)),
            halt=policy_halt(run.cluster),
            pauses=[moment.as_json() for moment in run.pauses.moments],
            clock=run_clock(run, options),
        )
    )


def run_clock(run: StartedRun, options: SimulationOptions) -> dict[str, object] | None:
    """The report's `clock`, when the run had its own: where it started and ended, in the zone
    a --start-at was read in, and how far the fast clock stepped ahead."""
    if run.clock is None or run.started_on is None:
        return None
    zone = ZoneInfo(options.clock.zone)
    stepped = run.fast_forward.advanced_seconds if run.fast_forward is not None else 0.0
    return {
        "started_at": _shown(run.started_on.astimezone(zone)),
        "ended_at": _shown(run.clock.now().astimezone(zone)),
        "zone": options.clock.zone,
        "rate": options.clock.rate,
        "fast_forward_seconds": round(stepped, 3),
    }


def _shown(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def _started_on_without_steps(run: StartedRun) -> datetime | None:
    """The clock's start, moved by the fast clock's steps: a halt comes after every step (none
    is taken while a node updates, nor once the fleet is halted), so the halt's time less this
    is its real time since the start."""
    if run.started_on is None or run.fast_forward is None:
        return run.started_on
    return run.started_on + timedelta(seconds=run.fast_forward.advanced_seconds)


def _node_outcomes(
    run: StartedRun, chaos: ChaosMonkey, options: SimulationOptions
) -> list[NodeOutcome]:
    reasons = run.controller.status_reasons()
    run.waits.record(run.controller.status_rows())
    intervals = active_intervals(run.observer.history(), run.started_at)
    agents = run.supervisor.views()
    views = run.observer.views()
    return [
        node_outcome(
            node,
            run.cluster,
            from_version=options.from_version,
            to_version=options.to_version,
            agent=agents[node.name],
            view=views[node.name],
            reason=reasons.get(node.name, ""),
            chaos_kills=sum(kill.node == node.name for kill in chaos.kills),
            log_path=run.log_dir / f"{node.name}.log",
            run_started_at=run.started_at,
            hook_answers=tuple(
                f"{phase}.{hook}" for name, phase, hook in run.hooks.answers if name == node.name
            ),
            wait_reasons=run.waits.of(node.name),
            active_intervals=intervals.get(node.name, []),
        )
        for node in run.fleet
    ]

"""Waiting for the simulated fleet: each tick starts the controller once every agent reported,
drives the scenarios, until every node is updated, the fleet settles (no change for
--settle-seconds, none updating), time runs out or Ctrl-C.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from brupop.domain.reason import Reason
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.fleet.fast_forward import fleet_wait_end
from brupop.simulation.fleet.observer import NodeView
from brupop.simulation.fleet.simulated_controller import ControllerRestart
from brupop.simulation.run_setup import StartedRun
from brupop.simulation.scenarios.chaos import ChaosMonkey
from brupop.simulation.scenarios.pause_schedule import policy_soaking

_TICK_SECONDS = 0.05
FIRST_REPORTS_SECONDS = 60.0
"""The longest the controller waits for every agent's first report before it starts anyway:
agents first report 8 to 15 s after they start over a real API server, more behind a slow
host, and the canaries are chosen from the nodes that have reported."""
_LATE_NAMED = 10  # a note names at most this many late nodes
# Reasons that time alone ends soon: a node with one is about to move, so the fleet is not settled
# (a soak that has just ended starts the others on the controller's next pass).
_ABOUT_TO_MOVE = frozenset({Reason.READY, Reason.STARTING, Reason.CANARY_SOAK})


@dataclass(frozen=True)
class WaitEnd:
    """How the wait ended, when not with the fleet done or settled."""

    timed_out: bool = False
    interrupted: bool = False  # a person pressed Ctrl-C (or SIGTERM)


def wait_for_fleet(
    run: StartedRun,
    chaos: ChaosMonkey,
    options: SimulationOptions,
    note: Callable[[str], None],
) -> WaitEnd:
    try:
        restart = ControllerRestart(
            options, stop=run.controller.stop, start=run.controller.restart, note=note
        )
        while True:
            now = time.monotonic()
            if now - run.started_at >= options.timeout:
                return WaitEnd(timed_out=True)
            if _finished(run, chaos, restart, options, now):
                return WaitEnd()
            if not run.controller.started:
                _start_when_known(run, now, note)
            restart.step(run.observer.first_active_at)
            run.pauses.step(rollout_began_at(run), run.started_at)
            run.unhealthy.step(run.observer.views())
            run.hooks.step(time.monotonic())
            run.waits.step(run.controller.status_rows, time.monotonic())
            _step_clock(run, scenarios_done=chaos.done and restart.done and run.pauses.done)
            time.sleep(_TICK_SECONDS)
    except KeyboardInterrupt:
        return WaitEnd(interrupted=True)


def _finished(
    run: StartedRun,
    chaos: ChaosMonkey,
    restart: ControllerRestart,
    options: SimulationOptions,
    now: float,
) -> bool:
    """Every node updated, or (the scenarios over) quiet for --settle-seconds and settled."""
    if not (run.controller.started and chaos.done and restart.done and run.pauses.done):
        return False
    views = run.observer.views()
    if all(view.phase(options.to_version) == "updated" for view in views.values()):
        return True
    last_change = max(run.observer.last_change_at, run.pauses.last_written_at or 0.0)
    quiet = now - last_change >= options.settle_seconds
    waiting_on_clock = run.fast_forward is not None and run.fast_forward.waiting
    if not quiet or not settled(views) or waiting_on_clock or policy_soaking(run.cluster):
        return False
    return not any(row.reason in _ABOUT_TO_MOVE for row in run.controller.status_rows())


def _step_clock(run: StartedRun, *, scenarios_done: bool) -> None:
    """Let a fast clock step ahead while the whole fleet waits on it (and the scenarios, which
    count real seconds, are over)."""
    forward, clock = run.fast_forward, run.clock
    if forward is None or clock is None or not forward.enabled:
        return
    ready = scenarios_done and run.controller.started
    forward.step(
        fleet_wait_end(run.controller, run.cluster, clock) if ready else None, time.monotonic()
    )


@dataclass(frozen=True)
class FirstReports:
    """Whether the controller may make its first pass, and the nodes whose agent has not
    reported yet."""

    due: bool
    late: tuple[str, ...]

    def note(self, waited: float) -> str:
        """The line that says who is late when the controller starts without them."""
        shown = ", ".join(self.late[:_LATE_NAMED])
        more = len(self.late) - _LATE_NAMED
        if more > 0:
            shown += f" and {more} more"
        return (
            f"no first report from {shown} after {waited:.0f} s: "
            "the controller starts without waiting for them"
        )


def first_reports(
    views: Mapping[str, NodeView], waited: float, deadline: float = FIRST_REPORTS_SECONDS
) -> FirstReports:
    """Every agent has reported its node and the update it is offered, or `deadline` seconds
    went by (`waited`) and some never did. The controller's first pass then sees the whole
    fleet: in a cluster the shadows are there before a rollout, and the start order and the
    canaries are picked among them all, not among whichever agents came up first."""
    late = tuple(
        sorted(n for n, v in views.items() if v.status_state is None or not v.target_version)
    )
    return FirstReports(due=not late or waited >= deadline, late=late)


def _start_when_known(run: StartedRun, now: float, note: Callable[[str], None]) -> None:
    """Start the controller once the fleet is known; say which nodes it starts without."""
    waited = now - run.started_at
    reports = first_reports(run.observer.views(), waited)
    if not reports.due:
        return
    if reports.late:
        note(reports.note(waited))
    run.controller.start()


def rollout_began_at(run: StartedRun) -> float | None:
    """When (monotonic) the rollout began: the first node left Idle, or every node reported
    its first status (a paused fleet never leaves Idle), whichever came first."""
    first = run.observer.first_active_at
    if first is not None:
        return first
    return run.observer.all_reported_at


def settled(views: dict[str, NodeView]) -> bool:
    """Every node has its shadow and its first report, and none is outside Idle.

    The first report matters: an agent creates its shadow before its first update check has
    finished, and until then an idle-looking node may still have an update to take."""
    return all(
        v.spec_state is not None and v.status_state is not None and not v.active
        for v in views.values()
    )

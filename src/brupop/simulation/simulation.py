"""Simulation: one whole rollout on this machine, from an empty cluster to a verdict.

It builds the in-memory cluster and the fleet, starts the real apiserver (loopback HTTPS) and
controller in threads and one agent process per node, watches until every node is updated or
the fleet settles (or time runs out), then stops everything and draws the report. The phases
live in run_setup, fleet_wait and run_report; this module runs them in order and cleans up.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console

from brupop.domain.reporting.rollout_timeline import Timeline
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.fleet_wait import wait_for_fleet
from brupop.simulation.outcome.clock_lines import clock_line
from brupop.simulation.outcome.display import LiveView, PlainProgress
from brupop.simulation.outcome.report import SimulationReport
from brupop.simulation.policy_notes import policy_notes
from brupop.simulation.run_report import run_report, run_timeline
from brupop.simulation.run_setup import StartedRun, set_up_run
from brupop.simulation.scenarios.chaos import ChaosMonkey
from brupop.simulation.work_secrets import remove_secrets


@dataclass(frozen=True)
class Outcome:
    """The report, and whether a person interrupted the run."""

    report: SimulationReport
    interrupted: bool = False
    timeline: Timeline | None = None  # only when --timeline asked for a picture


class Simulation:
    """Runs one simulated rollout; `run()` always stops what it started."""

    def __init__(self, options: SimulationOptions, console: Console, *, live: bool) -> None:
        self._options = options
        self._console = console
        self._live = live
        self._stops: list[Callable[[], None]] = []
        self._timeline: Timeline | None = None
        self._interrupted = False
        self._keep_cluster = True  # what the run made on a real cluster, until it went well

    def run(self) -> Outcome:
        chosen = self._options.work_dir
        if chosen is not None:
            chosen.mkdir(parents=True, exist_ok=True)
        work_dir = chosen or Path(tempfile.mkdtemp(prefix="brupop-simulate-"))
        log_dir = self._options.log_dir or work_dir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        keep_work_dir = True
        try:
            report = self._simulate(work_dir, log_dir)
            keep_work_dir = chosen is not None or (not report.ok and self._options.log_dir is None)
            self._keep_cluster = keep_work_dir
            if not keep_work_dir and self._options.log_dir is None:
                report = replace(report, log_dir=None)  # they go with the work directory
            return Outcome(report, self._interrupted, self._timeline)
        finally:
            self._stop_all()
            if keep_work_dir:
                remove_secrets(work_dir)
            else:
                shutil.rmtree(work_dir, ignore_errors=True)

    def _simulate(self, work_dir: Path, log_dir: Path) -> SimulationReport:
        options = self._options
        run = set_up_run(
            options, work_dir, log_dir, self._stops, keep_cluster=lambda: self._keep_cluster
        )
        display = self._display(run)
        run.observer.on_change = display.node_changed
        run.pauses.note = display.note
        display.note(
            f"{len(run.fleet)} nodes on {options.from_version}, "
            f"{options.to_version} offered, at most {options.max_concurrent_label} "
            f"at once; apiserver {run.apiserver_url}"
        )
        run.started_at, run.started_on = time.monotonic(), run.cluster.clock.now()
        nodes = run.cluster.nodes.list().items
        for line in policy_notes(options.policy, nodes, run.started_on):
            display.note(line)
        if run.clock is not None:
            display.note(clock_line(options.clock, run.started_on))
        run.observer.start()
        run.supervisor.start()
        self._stops.append(run.supervisor.stop)
        chaos = self._chaos(run)
        if isinstance(display, LiveView):
            with display:
                ended = wait_for_fleet(run, chaos, options, display.note)
        else:
            ended = wait_for_fleet(run, chaos, options, display.note)
        self._interrupted = ended.interrupted
        duration = time.monotonic() - run.started_at
        chaos.stop()
        # Agents stopping at once share this machine's cores: give each its turn.
        run.supervisor.stop(grace_seconds=5.0 + 0.1 * len(run.fleet))
        if options.timeline is not None:
            self._timeline = run_timeline(run, options, duration)
        return run_report(run, chaos, options, ended, duration)

    def _display(self, run: StartedRun) -> LiveView | PlainProgress:
        if not self._live:
            return PlainProgress(self._console, self._options.to_version, time.monotonic())
        return LiveView(
            self._console,
            self._options.to_version,
            nodes=run.observer.views,
            agents=run.supervisor.views,
            active=run.observer.active_count,
            limit=self._options.max_concurrent_label,
            reasons=run.controller.status_reasons,
        )

    def _chaos(self, run: StartedRun) -> ChaosMonkey:
        chaos = ChaosMonkey(
            self._options.chaos_kills,
            ready=lambda: run.supervisor.running_nodes(ready=True),
            active=lambda: [name for name, v in run.observer.views().items() if v.active],
            send=run.supervisor.signal_agent,
            elapsed=lambda: time.monotonic() - run.started_at,
            seed=self._options.chaos_seed,
        )
        chaos.start()
        self._stops.append(chaos.stop)
        return chaos

    def _stop_all(self) -> None:
        while self._stops:
            stop = self._stops.pop()
            stop()

"""Simulation: one whole rollout on this machine, from an empty cluster to a verdict.

It builds the in-memory cluster and the fleet, starts the real apiserver (loopback HTTPS) and
controller in threads and one agent process per node, watches until every node is updated or
the fleet settles (or time runs out), then stops everything and draws the report.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from rich.console import Console

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.rollout_timeline import Timeline
from brupop.domain.waiting_reason import NodeReport
from brupop.entrypoints.simulate import components
from brupop.entrypoints.simulate.agent_env import agent_argv, agent_env, default_apiclient
from brupop.entrypoints.simulate.agent_logs import count_tracebacks
from brupop.entrypoints.simulate.certificates import TlsFiles, write_loopback_tls
from brupop.entrypoints.simulate.chaos import ChaosMonkey
from brupop.entrypoints.simulate.display import LiveView, PlainProgress
from brupop.entrypoints.simulate.endpoints import Endpoints, write_endpoints
from brupop.entrypoints.simulate.fleet import SimulatedNode, build_fleet
from brupop.entrypoints.simulate.hook_responder import HookResponder
from brupop.entrypoints.simulate.node_outcome import node_outcome
from brupop.entrypoints.simulate.observer import FleetObserver, NodeView, active_intervals
from brupop.entrypoints.simulate.options import SimulationOptions
from brupop.entrypoints.simulate.pause_schedule import (
    PauseSchedule,
    policy_halt,
    policy_phase,
    policy_soaking,
)
from brupop.entrypoints.simulate.report import RunFacts, SimulationReport, judge
from brupop.entrypoints.simulate.supervisor import AgentSpec, AgentSupervisor
from brupop.entrypoints.simulate.timeline import halt_marks, pause_marks, simulated_timeline
from brupop.entrypoints.simulate.unhealthy import UnhealthyNodes
from brupop.entrypoints.simulate.wait_reasons import WaitReasons
from brupop.entrypoints.simulate.work_secrets import remove_secrets

_TICK_SECONDS = 0.05


@dataclass(frozen=True)
class Outcome:
    """The report, and whether a person interrupted the run."""

    report: SimulationReport
    interrupted: bool = False
    timeline: Timeline | None = None  # only when --timeline asked for a picture


@dataclass
class _Run:
    """What one run started, for watching it and reporting on it."""

    cluster: InMemoryCluster
    fleet: list[SimulatedNode]
    log_dir: Path
    observer: FleetObserver
    supervisor: AgentSupervisor
    pauses: PauseSchedule
    unhealthy: UnhealthyNodes
    hooks: HookResponder
    waits: WaitReasons
    started_at: float = 0.0  # time.monotonic()
    started_on: datetime | None = None  # the cluster's clock, which stamps a halt


class Simulation:
    """Runs one simulated rollout; `run()` always stops what it started."""

    def __init__(self, options: SimulationOptions, console: Console, *, live: bool) -> None:
        self._options = options
        self._console = console
        self._live = live
        self._names = options.node_names()
        self._stops: list[Callable[[], None]] = []
        self._controller: components.ControllerHandle | None = None
        self._controller_restarts = 0
        self._timeline: Timeline | None = None
        self._interrupted = False
        self._timed_out = False
        self._apiserver_url = ""
        self._work_dir: Path | None = None
        self._ca_file: Path | None = None

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
        run = self._set_up(work_dir, log_dir)
        display = self._display(run)
        run.observer.on_change = display.node_changed
        run.pauses.note = display.note
        display.note(
            f"{len(run.fleet)} nodes on {self._options.from_version}, "
            f"{self._options.to_version} offered, at most {self._options.max_concurrent_label} "
            f"at once; apiserver {self._apiserver_url}"
        )
        run.started_at, run.started_on = time.monotonic(), run.cluster.clock.now()
        run.observer.start()
        run.supervisor.start()
        self._stops.append(run.supervisor.stop)
        chaos = self._chaos(run)
        if isinstance(display, LiveView):
            with display:
                self._wait(run, chaos, display.note)
        else:
            self._wait(run, chaos, display.note)
        duration = time.monotonic() - run.started_at
        chaos.stop()
        # Agents stopping at once share this machine's cores: give each its turn.
        run.supervisor.stop(grace_seconds=5.0 + 0.1 * len(run.fleet))
        if self._options.timeline is not None:
            self._timeline = self._timeline_of(run, duration)
        return self._report(run, chaos, duration)

    # --- setting up -----------------------------------------------------------------------

    def _set_up(self, work_dir: Path, log_dir: Path) -> _Run:
        options = self._options
        cluster = InMemoryCluster()
        components.send_cluster_logs_to(log_dir / "cluster.log")
        tls = write_loopback_tls(work_dir / "tls")
        self._work_dir, self._ca_file = work_dir, tls.ca_cert
        fleet = build_fleet(
            cluster,
            self._names,
            work_dir,
            blocked_drains=options.block_drain,
            shape=options.shape,
        )
        if options.policy is not None:
            cluster.policies.apply(options.policy)
        apiserver = components.start_apiserver(cluster, tls, options)
        self._apiserver_url = apiserver.url
        self._stops.append(apiserver.stop)
        self._start_controller(cluster)
        self._stops.append(self._stop_controller)
        observer = FleetObserver(cluster.shadows, self._names)
        self._stops.append(observer.stop)
        supervisor = AgentSupervisor(
            self._agent_specs(cluster, fleet, tls, work_dir, log_dir),
            restart_backoff=options.timing["restart-backoff"],
            restart_backoff_max=options.timing["restart-backoff-max"],
        )
        pauses = PauseSchedule(
            cluster.policies,
            pause_at=options.pause_at,
            resume_at=options.resume_at,
            note=lambda _text: None,  # the display's note is attached once it exists
        )
        unhealthy = UnhealthyNodes(cluster, fleet, options.unhealthy)
        hooks = HookResponder(cluster.nodes, options.hooks)
        waits = WaitReasons(self._names, every=options.timing["controller-tick"])
        return _Run(cluster, fleet, log_dir, observer, supervisor, pauses, unhealthy, hooks, waits)

    def _agent_specs(
        self,
        cluster: InMemoryCluster,
        fleet: list[SimulatedNode],
        tls: TlsFiles,
        work_dir: Path,
        log_dir: Path,
    ) -> list[AgentSpec]:
        apiclient = self._options.apiclient or default_apiclient(work_dir)
        return [
            AgentSpec(
                node=node.name,
                argv=agent_argv(),
                env=agent_env(
                    node,
                    self._options,
                    apiserver_url=self._apiserver_url,
                    tls=tls,
                    apiclient=apiclient,
                    namespace=cluster.namespace,
                ),
                log_path=log_dir / f"{node.name}.log",
            )
            for node in fleet
        ]

    def _display(self, run: _Run) -> LiveView | PlainProgress:
        if not self._live:
            return PlainProgress(self._console, self._options.to_version, time.monotonic())
        return LiveView(
            self._console,
            self._options.to_version,
            nodes=run.observer.views,
            agents=run.supervisor.views,
            active=run.observer.active_count,
            limit=self._options.max_concurrent_label,
        )

    def _chaos(self, run: _Run) -> ChaosMonkey:
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

    # --- the controller, which a scenario may restart -------------------------------------

    def _start_controller(self, cluster: InMemoryCluster) -> None:
        self._controller = components.new_controller(cluster, self._options)
        self._controller.start()
        if self._work_dir is not None and self._ca_file is not None:
            endpoints = Endpoints(self._apiserver_url, self._controller.url, self._ca_file)
            write_endpoints(self._work_dir, endpoints)

    def _status_rows(self) -> list[NodeReport]:
        """The controller's `brupop status` rows as of its last pass (none while it is down)."""
        return self._controller.reports() if self._controller is not None else []

    def _stop_controller(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def _restart_controller(self, cluster: InMemoryCluster) -> None:
        self._start_controller(cluster)
        self._controller_restarts += 1

    # --- waiting for the fleet ------------------------------------------------------------

    def _wait(self, run: _Run, chaos: ChaosMonkey, note: Callable[[str], None]) -> None:
        try:
            restart = _ControllerRestart(
                self._options,
                stop=self._stop_controller,
                start=lambda: self._restart_controller(run.cluster),
                note=note,
            )
            while not self._finished(run, chaos, restart):
                restart.step(run.observer.first_active_at)
                run.pauses.step(_rollout_began_at(run), run.started_at)
                run.unhealthy.step(run.observer.views())
                run.hooks.step(time.monotonic())
                run.waits.step(self._status_rows, time.monotonic())
                time.sleep(_TICK_SECONDS)
        except KeyboardInterrupt:
            self._interrupted = True

    def _finished(self, run: _Run, chaos: ChaosMonkey, restart: _ControllerRestart) -> bool:
        options = self._options
        now = time.monotonic()
        if now - run.started_at >= options.timeout:
            self._timed_out = True
            return True
        if not (chaos.done and restart.done and run.pauses.done):
            return False
        views = run.observer.views()
        if all(view.phase(options.to_version) == "updated" for view in views.values()):
            return True
        last_change = max(run.observer.last_change_at, run.pauses.last_written_at or 0.0)
        quiet = now - last_change >= options.settle_seconds
        return quiet and _settled(views) and not policy_soaking(run.cluster)

    # --- the outcome -----------------------------------------------------------------------

    def _timeline_of(self, run: _Run, duration: float) -> Timeline:
        return simulated_timeline(
            self._names,
            run.observer.history(),
            run.supervisor.views(),
            started_at=run.started_at,
            ended_at=run.started_at + duration,
            to_version=self._options.to_version,
            limit=self._options.limit_in_force,
            fleet_marks=pause_marks(run.pauses.moments)
            + halt_marks(run.cluster.policies, run.started_on),
        )

    def _report(self, run: _Run, chaos: ChaosMonkey, duration: float) -> SimulationReport:
        options = self._options
        reasons = components.status_reasons(self._controller)
        run.waits.record(self._status_rows())
        intervals = active_intervals(run.observer.history(), run.started_at)
        agents = run.supervisor.views()
        views = run.observer.views()
        nodes = [
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
                    f"{phase}.{hook}"
                    for name, phase, hook in run.hooks.answers
                    if name == node.name
                ),
                wait_reasons=run.waits.of(node.name),
                active_intervals=intervals.get(node.name, []),
            )
            for node in run.fleet
        ]
        return judge(
            RunFacts(
                duration_seconds=duration,
                max_concurrent_allowed=options.limit_in_force,
                max_concurrent_observed=run.observer.max_active,
                tracebacks=count_tracebacks(run.log_dir / f"{n}.log" for n in self._names),
                nodes=nodes,
                from_version=options.from_version,
                to_version=options.to_version,
                timed_out=self._timed_out,
                interrupted=self._interrupted,
                chaos_kills_sent=len(chaos.kills),
                controller_restarts=self._controller_restarts,
                log_dir=str(run.log_dir),
                policy_phase=policy_phase(run.cluster, len(run.fleet)),
                halt=policy_halt(run.cluster),
                pauses=[moment.as_json() for moment in run.pauses.moments],
            )
        )

    def _stop_all(self) -> None:
        while self._stops:
            stop = self._stops.pop()
            stop()


class _ControllerRestart:
    """The `--restart-controller-after` scenario: stop the controller mid-rollout, restart it."""

    def __init__(
        self,
        options: SimulationOptions,
        *,
        stop: Callable[[], None],
        start: Callable[[], None],
        note: Callable[[str], None],
    ) -> None:
        self._after = options.restart_controller_after
        self._down_for = options.controller_down_seconds
        self._down_since: float | None = None
        self._stop, self._start, self._note = stop, start, note

    @property
    def done(self) -> bool:
        return self._after is None and self._down_since is None

    def step(self, rollout_began_at: float | None) -> None:
        """Stop or start the controller when its moment has come."""
        now = time.monotonic()
        began = rollout_began_at
        if self._after is not None and began is not None and now - began >= self._after:
            self._stop()
            self._note("controller stopped (scenario)")
            self._down_since, self._after = now, None
        if self._down_since is not None and now - self._down_since >= self._down_for:
            self._start()
            self._note("controller started again (scenario)")
            self._down_since = None


def _rollout_began_at(run: _Run) -> float | None:
    """When (monotonic) the rollout began: the first node left Idle, or every node reported
    its first status (a paused fleet never leaves Idle), whichever came first."""
    first = run.observer.first_active_at
    if first is not None:
        return first
    return run.observer.all_reported_at


def _settled(views: dict[str, NodeView]) -> bool:
    """Every node has its shadow and its first report, and none is outside Idle.

    The first report matters: an agent creates its shadow before its first update check has
    finished, and until then an idle-looking node may still have an update to take."""
    return all(
        v.spec_state is not None and v.status_state is not None and not v.active
        for v in views.values()
    )

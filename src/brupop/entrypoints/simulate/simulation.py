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
from pathlib import Path

from rich.console import Console

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.shadow import Shadow, shadow_name
from brupop.entrypoints.simulate import components
from brupop.entrypoints.simulate.agent_env import agent_argv, agent_env, default_apiclient
from brupop.entrypoints.simulate.agent_logs import count_tracebacks
from brupop.entrypoints.simulate.agent_logs import last_failure as last_failure_in
from brupop.entrypoints.simulate.certificates import write_loopback_tls
from brupop.entrypoints.simulate.chaos import ChaosMonkey
from brupop.entrypoints.simulate.display import LiveView, PlainProgress
from brupop.entrypoints.simulate.fleet import SimulatedNode, build_fleet
from brupop.entrypoints.simulate.host_state import read_host_facts
from brupop.entrypoints.simulate.observer import FleetObserver, NodeView
from brupop.entrypoints.simulate.options import SimulationOptions
from brupop.entrypoints.simulate.report import NodeReport, RunFacts, SimulationReport, judge
from brupop.entrypoints.simulate.supervisor import AgentSpec, AgentSupervisor
from brupop.ports.errors import NotFoundError

_TICK_SECONDS = 0.05


@dataclass(frozen=True)
class Outcome:
    """The report, and whether a person interrupted the run."""

    report: SimulationReport
    interrupted: bool = False


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
        self._interrupted = False
        self._timed_out = False

    def run(self) -> Outcome:
        chosen = self._options.work_dir
        if chosen is not None:
            chosen.mkdir(parents=True, exist_ok=True)
        work_dir = chosen or Path(tempfile.mkdtemp(prefix="brupop-simulate-"))
        log_dir = self._options.log_dir or work_dir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        keep_work_dir = True
        try:
            report = self._run(work_dir, log_dir)
            keep_work_dir = chosen is not None or (not report.ok and self._options.log_dir is None)
            if not keep_work_dir and self._options.log_dir is None:
                report = replace(report, log_dir=None)  # they go with the work directory
            return Outcome(report=report, interrupted=self._interrupted)
        finally:
            self._stop_all()
            if not keep_work_dir:
                shutil.rmtree(work_dir, ignore_errors=True)

    # --- setting up -----------------------------------------------------------------------

    def _run(self, work_dir: Path, log_dir: Path) -> SimulationReport:
        options = self._options
        cluster = InMemoryCluster()
        components.send_cluster_logs_to(log_dir / "cluster.log")
        tls = write_loopback_tls(work_dir / "tls")
        fleet = build_fleet(cluster, self._names, work_dir, blocked_drains=options.block_drain)
        apiserver = components.start_apiserver(cluster, tls, options)
        self._stops.append(apiserver.stop)
        self._start_controller(cluster)
        self._stops.append(self._stop_controller)
        observer = FleetObserver(cluster.shadows, self._names)
        self._stops.append(observer.stop)
        apiclient = options.apiclient or default_apiclient(work_dir)
        supervisor = AgentSupervisor(
            [
                AgentSpec(
                    node=node.name,
                    argv=agent_argv(),
                    env=agent_env(
                        node,
                        options,
                        apiserver_url=apiserver.url,
                        tls=tls,
                        apiclient=apiclient,
                        namespace=cluster.namespace,
                    ),
                    log_path=log_dir / f"{node.name}.log",
                )
                for node in fleet
            ],
            restart_backoff=options.timing["restart-backoff"],
            restart_backoff_max=options.timing["restart-backoff-max"],
        )
        started_at = time.monotonic()
        display = self._display(started_at, observer, supervisor)
        observer.on_change = display.node_changed
        display.note(
            f"{len(fleet)} nodes on {options.from_version}, {options.to_version} offered, "
            f"at most {options.max_concurrent_label} at once; apiserver {apiserver.url}"
        )
        observer.start()
        supervisor.start()
        self._stops.append(supervisor.stop)
        chaos = ChaosMonkey(
            options.chaos_kills,
            ready=lambda: supervisor.running_nodes(ready=True),
            active=lambda: [name for name, v in observer.views().items() if v.active],
            send=supervisor.signal_agent,
            elapsed=lambda: time.monotonic() - started_at,
            seed=options.chaos_seed,
        )
        chaos.start()
        self._stops.append(chaos.stop)
        if isinstance(display, LiveView):
            with display:
                self._wait(cluster, observer, chaos, started_at, display.note)
        else:
            self._wait(cluster, observer, chaos, started_at, display.note)
        duration = time.monotonic() - started_at
        chaos.stop()
        supervisor.stop()
        nodes = self._node_reports(cluster, fleet, observer, supervisor, chaos, log_dir)
        return judge(
            RunFacts(
                duration_seconds=duration,
                max_concurrent_allowed=options.max_concurrent,
                max_concurrent_observed=observer.max_active,
                tracebacks=count_tracebacks(log_dir / f"{name}.log" for name in self._names),
                nodes=nodes,
                from_version=options.from_version,
                to_version=options.to_version,
                timed_out=self._timed_out,
                interrupted=self._interrupted,
                chaos_kills_sent=len(chaos.kills),
                controller_restarts=self._controller_restarts,
                log_dir=str(log_dir),
            )
        )

    def _display(
        self, started_at: float, observer: FleetObserver, supervisor: AgentSupervisor
    ) -> LiveView | PlainProgress:
        if not self._live:
            return PlainProgress(self._console, self._options.to_version, started_at)
        return LiveView(
            self._console,
            self._options.to_version,
            nodes=observer.views,
            agents=supervisor.views,
            active=observer.active_count,
            limit=self._options.max_concurrent_label,
        )

    # --- the controller, which a scenario may restart -------------------------------------

    def _start_controller(self, cluster: InMemoryCluster) -> None:
        self._controller = components.new_controller(cluster, self._options)
        self._controller.start()

    def _stop_controller(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    # --- waiting for the fleet ------------------------------------------------------------

    def _wait(
        self,
        cluster: InMemoryCluster,
        observer: FleetObserver,
        chaos: ChaosMonkey,
        started_at: float,
        note: Callable[[str], None],
    ) -> None:
        options = self._options
        restart_at = options.restart_controller_after
        down_since: float | None = None
        try:
            while True:
                now = time.monotonic()
                elapsed = now - started_at
                began = observer.first_active_at
                in_rollout = 0.0 if began is None else now - began
                if restart_at is not None and began is not None and in_rollout >= restart_at:
                    self._stop_controller()
                    note("controller stopped (scenario)")
                    down_since, restart_at = now, None
                if down_since is not None and now - down_since >= options.controller_down_seconds:
                    self._start_controller(cluster)
                    self._controller_restarts += 1
                    note("controller started again (scenario)")
                    down_since = None
                views = observer.views()
                scenario_done = chaos.done and restart_at is None and down_since is None
                if scenario_done and all(
                    v.phase(options.to_version) == "updated" for v in views.values()
                ):
                    return
                quiet = now - observer.last_change_at >= options.settle_seconds
                if scenario_done and quiet and _settled(views):
                    return
                if elapsed >= options.timeout:
                    self._timed_out = True
                    return
                time.sleep(_TICK_SECONDS)
        except KeyboardInterrupt:
            self._interrupted = True

    # --- the outcome -----------------------------------------------------------------------

    def _node_reports(
        self,
        cluster: InMemoryCluster,
        fleet: list[SimulatedNode],
        observer: FleetObserver,
        supervisor: AgentSupervisor,
        chaos: ChaosMonkey,
        log_dir: Path,
    ) -> list[NodeReport]:
        reasons = components.status_reasons(self._controller)
        agents = supervisor.views()
        views = observer.views()
        reports = []
        for node in fleet:
            shadow = _find_shadow(cluster, node.name)
            status = shadow.status if shadow else None
            agent = agents[node.name]
            host = read_host_facts(node.host_dir)
            updated = status is not None and status.current_version == self._options.to_version
            reports.append(
                NodeReport(
                    name=node.name,
                    initial_version=self._options.from_version,
                    final_version=status.current_version if status else None,
                    final_state=str(status.current_state) if status else None,
                    unschedulable=cluster.nodes.get(node.name).unschedulable,
                    reboots=host.reboots if host else 0,
                    agent_exit_codes=[exit_.code for exit_ in agent.exits],
                    agent_peak_rss_kib=max((e.peak_rss_kib for e in agent.exits), default=0),
                    agent_restarts=agent.restarts,
                    unexpected_exits=[e.code for e in agent.exits if not e.acceptable],
                    chaos_kills=sum(kill.node == node.name for kill in chaos.kills),
                    crash_count=status.crash_count if status else 0,
                    phase_seconds={
                        key: round(value, 2)
                        for key, value in views[node.name].phase_seconds.items()
                    },
                    reason=reasons.get(node.name, "") if not updated else "",
                    last_failure=last_failure_in(log_dir / f"{node.name}.log"),
                    agent_exits=[
                        {
                            "code": e.code,
                            "cause": str(e.cause),
                            "ran_seconds": round(e.ran_seconds, 2),
                            "peak_rss_kib": e.peak_rss_kib,
                        }
                        for e in agent.exits
                    ],
                )
            )
        return reports

    def _stop_all(self) -> None:
        while self._stops:
            stop = self._stops.pop()
            stop()


def _settled(views: dict[str, NodeView]) -> bool:
    """Every node has its shadow and none is outside Idle."""
    return all(v.spec_state is not None and not v.active for v in views.values())


def _find_shadow(cluster: InMemoryCluster, node: str) -> Shadow | None:
    try:
        return cluster.shadows.get(shadow_name(node))
    except NotFoundError:
        return None

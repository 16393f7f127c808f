"""Setting up one simulated run: the cluster (in memory, or a real one with --kubeconfig) and
fleet, loopback TLS, the apiserver, the controller, and the agents and scenario drivers that are
then started and watched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from brupop.adapters.system.shared_clock import SharedClock
from brupop.cli.fleet_description.nodes import TOKEN_TTL_SECONDS, SimulatedNode, build_fleet
from brupop.cli.fleet_description.simulated_cluster import SimulatedCluster
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.fleet import components
from brupop.simulation.fleet.agent_env import agent_argv, agent_env, default_apiclient
from brupop.simulation.fleet.backends import ClusterBackend, choose_backend
from brupop.simulation.fleet.certificates import TlsFiles, write_loopback_tls
from brupop.simulation.fleet.fast_forward import FastForward, start_clock
from brupop.simulation.fleet.observer import FleetObserver
from brupop.simulation.fleet.simulated_controller import SimulatedController
from brupop.simulation.fleet.supervisor import AgentSpec, AgentSupervisor
from brupop.simulation.fleet.unhealthy import UnhealthyNodes
from brupop.simulation.outcome.wait_reasons import WaitReasons
from brupop.simulation.scenarios.hook_responder import HookResponder
from brupop.simulation.scenarios.pause_schedule import PauseSchedule


@dataclass
class StartedRun:
    """What one run started, for watching it and reporting on it."""

    names: list[str]
    cluster: SimulatedCluster
    fleet: list[SimulatedNode]
    log_dir: Path
    apiserver_url: str
    controller: SimulatedController
    observer: FleetObserver
    supervisor: AgentSupervisor
    pauses: PauseSchedule
    unhealthy: UnhealthyNodes
    hooks: HookResponder
    waits: WaitReasons
    clock: SharedClock | None = None  # the run's own clock (--start-at, --clock-rate)
    fast_forward: FastForward | None = None
    started_at: float = 0.0  # time.monotonic()
    started_on: datetime | None = None  # the cluster's clock, which stamps a halt


def set_up_run(
    options: SimulationOptions,
    work_dir: Path,
    log_dir: Path,
    stops: list[Callable[[], None]],
    keep_cluster: Callable[[], bool] = lambda: True,
) -> StartedRun:
    """Start the apiserver and prepare the rest (their stops go on `stops`); the agents and the
    controller are not started yet. `keep_cluster` says, at the end, whether a real cluster
    keeps what the run made there."""
    names = options.node_names()
    components.send_cluster_logs_to(log_dir / "cluster.log")
    clock = start_clock(options.clock, work_dir) if options.clock.shifted else None
    backend = choose_backend(options, work_dir, clock)
    stops.append(lambda: backend.close(keep=keep_cluster()))
    cluster = backend.cluster
    tls = write_loopback_tls(work_dir / "tls")
    fleet = build_fleet(
        backend.fleet_cluster,
        names,
        work_dir,
        blocked_drains=options.block_drain,
        shape=options.shape,
        # the clock may run ahead by (rate - 1) times the run's real length
        token_ttl_seconds=TOKEN_TTL_SECONDS + (options.clock.rate - 1) * options.timeout,
    )
    backend.fleet_built()
    apiserver_url, controller = _start_control_plane(backend, options, tls, work_dir, stops)
    observer = FleetObserver(cluster.shadows, names)
    stops.append(observer.stop)
    supervisor = AgentSupervisor(
        _agent_specs(options, cluster, fleet, apiserver_url, tls, work_dir, log_dir, clock),
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
    waits = WaitReasons(names, every=options.timing["controller-tick"])
    return StartedRun(
        names=names,
        cluster=cluster,
        fleet=fleet,
        log_dir=log_dir,
        apiserver_url=apiserver_url,
        controller=controller,
        observer=observer,
        supervisor=supervisor,
        pauses=pauses,
        unhealthy=unhealthy,
        hooks=hooks,
        waits=waits,
        clock=clock,
        fast_forward=FastForward(clock, options.clock.rate) if clock is not None else None,
    )


def _start_control_plane(
    backend: ClusterBackend,
    options: SimulationOptions,
    tls: TlsFiles,
    work_dir: Path,
    stops: list[Callable[[], None]],
) -> tuple[str, SimulatedController]:
    """The apiserver, started, the policy, and the controller, ready to start; their stops go
    on `stops`."""
    apiserver = backend.start_apiserver(tls)
    stops.append(apiserver.stop)
    if options.policy is not None:
        backend.apply_policy(options.policy)
    controller = SimulatedController(
        backend.new_controller, apiserver_url=apiserver.url, work_dir=work_dir, ca_file=tls.ca_cert
    )
    stops.append(controller.stop)  # started once the agents have reported (fleet_wait)
    return apiserver.url, controller


def _agent_specs(
    options: SimulationOptions,
    cluster: SimulatedCluster,
    fleet: list[SimulatedNode],
    apiserver_url: str,
    tls: TlsFiles,
    work_dir: Path,
    log_dir: Path,
    clock: SharedClock | None,
) -> list[AgentSpec]:
    apiclient = options.apiclient or default_apiclient(work_dir)
    return [
        AgentSpec(
            node=node.name,
            argv=agent_argv(),
            env=agent_env(
                node,
                options,
                apiserver_url=apiserver_url,
                tls=tls,
                apiclient=apiclient,
                namespace=cluster.namespace,
                clock_file=clock.path if clock is not None else None,
            ),
            log_path=log_dir / f"{node.name}.log",
        )
        for node in fleet
    ]

"""The options of `brupop simulate`: the parser put together from its flag groups, and the
flags read and checked once into a frozen SimulationOptions.

Every timing flag compresses one of the original's intervals so a small fleet rolls in seconds;
a bad flag stops the command with one line naming it and exit code 2.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brupop.cli.command_parser import CommandParser
from brupop.cli.fleet_description.flag_values import (
    ONE_DAY,
    OptionError,
    read_integer,
    read_node,
    read_seconds,
)
from brupop.cli.fleet_description.fleet_flags import (
    UNLIMITED,
    add_fleet_flags,
    read_executable,
    read_max_concurrent,
    read_shape,
    read_versions,
)
from brupop.cli.fleet_description.fleet_shape import FleetShape
from brupop.domain.policy.scheduling_policy import concurrency_limit
from brupop.simulation.flags.clock_flags import ClockChoice, add_clock_flags, read_clock
from brupop.simulation.flags.cluster_flags import (
    ClusterFlags,
    add_cluster_flags,
    read_cluster,
)
from brupop.simulation.flags.disruption_flags import (
    add_disruption_flags,
    read_chaos_seed,
    read_fault,
    read_host_kind,
    read_late_host,
    read_restart_after,
)
from brupop.simulation.flags.flag_needs import check_flag_needs
from brupop.simulation.flags.output_flags import add_output_flags, read_live, read_output
from brupop.simulation.flags.output_paths import (
    log_dir_path,
    picture_path,
    report_path,
    work_dir_path,
)
from brupop.simulation.flags.policy_flags import (
    add_policy_flags,
    read_hooks,
    read_pause_moments,
    read_policy,
    read_webhook,
)
from brupop.simulation.flags.timing import Timing
from brupop.simulation.flags.timing_flags import (
    add_settle_flag,
    add_timing_flags,
    read_timing,
)
from brupop.simulation.scenarios.hook_responder import EmulatedHook

__all__ = ["OptionError", "SimulationOptions", "build_parser", "parse_options"]


@dataclass(frozen=True)
class SimulationOptions:
    """Everything one simulated rollout needs to know, validated."""

    nodes: int = 6
    max_concurrent: int | None = 1  # None: unlimited
    from_version: str = "1.19.0"
    to_version: str = "1.20.0"
    apiclient: Path | None = None  # None: the bundled host emulator
    report: Path | None = None
    timeline: Path | None = None  # the picture of the run (.svg or .png)
    log_dir: Path | None = None
    work_dir: Path | None = None
    timeout: float = 120.0
    timing: Timing = field(default_factory=Timing)
    block_drain: tuple[str, ...] = ()
    unhealthy: tuple[str, ...] = ()  # after their reboot: NotReady, agent pod never Ready
    faults: tuple[tuple[str, str], ...] = ()  # (node, fault)
    late_hosts: tuple[tuple[str, float], ...] = ()  # (node, seconds its first answer is late)
    host_kinds: tuple[tuple[str, str], ...] = ()  # (node, kind of host: lockdown, no-updates, eol)
    chaos_kills: int = 0
    chaos_seed: int | None = None
    restart_controller_after: float | None = None
    controller_down_seconds: float = 1.0
    settle_seconds: float = 3.0
    live: bool | None = None  # None: live view only on a terminal
    policy: dict[str, Any] | None = field(default=None, hash=False)  # --policy, checked
    pause_at: float | None = None
    resume_at: float | None = None
    notify: str | None = None  # --notify URL: the run's notifications go to this webhook
    hooks: tuple[EmulatedHook, ...] = ()  # --hook NAME[:SECONDS|:never]: emulated responders
    shape: FleetShape = field(default_factory=FleetShape)  # --zones, --pods-per-node, ...
    cluster: ClusterFlags = field(default_factory=ClusterFlags)  # --kubeconfig: a real one
    clock: ClockChoice = field(default_factory=ClockChoice)  # --start-at, --clock-rate

    @property
    def limit_in_force(self) -> int | None:
        """The global limit the controller applies: the --policy's `maxConcurrent` (a count,
        or a percentage of the fleet) over --max-concurrent, as the controller reads them."""
        value = ((self.policy or {}).get("spec") or {}).get("maxConcurrent")
        if isinstance(value, int | str):  # the policy file was checked: a count or "N%"
            return concurrency_limit(value, self.nodes)
        return self.max_concurrent

    @property
    def max_concurrent_label(self) -> str:
        limit = self.limit_in_force
        return UNLIMITED if limit is None else str(limit)

    def node_names(self) -> list[str]:
        """node-01 ... node-NN, zero-padded so they sort as numbers."""
        width = max(2, len(str(self.nodes)))
        return [f"node-{index:0{width}d}" for index in range(1, self.nodes + 1)]


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="brupop simulate",
        description="Roll a simulated Bottlerocket fleet on this machine: in-memory cluster, "
        "real controller and apiserver, one real agent process per node.",
    )
    add_fleet_flags(parser)
    add_output_flags(parser)
    scenario = parser.add_argument_group("scenarios")
    add_disruption_flags(scenario)
    add_policy_flags(scenario)
    add_settle_flag(scenario)
    add_timing_flags(parser)
    add_clock_flags(parser)
    add_cluster_flags(parser)
    return parser


def parse_options(argv: list[str]) -> SimulationOptions:
    """Parse and validate `argv`; OptionError names the first bad flag."""
    args = build_parser().parse_args(argv)
    nodes = read_integer("--nodes", args.nodes, minimum=1, maximum=500)
    names = SimulationOptions(nodes=nodes).node_names()
    from_version, to_version = read_versions(args)
    timing = read_timing(args)
    policy = read_policy(args.policy)
    options = SimulationOptions(
        nodes=nodes,
        max_concurrent=read_max_concurrent(args.max_concurrent),
        from_version=from_version,
        to_version=to_version,
        apiclient=read_executable("--apiclient", args.apiclient),
        report=read_output(report_path, args.report),
        timeline=read_output(picture_path, args.timeline),
        log_dir=read_output(log_dir_path, args.log_dir),
        work_dir=read_output(work_dir_path, args.work_dir),
        timeout=read_seconds("--timeout", args.timeout, most=ONE_DAY),
        timing=timing,
        block_drain=tuple(read_node("--block-drain", name, names) for name in args.block_drain),
        unhealthy=tuple(read_node("--unhealthy", name, names) for name in args.unhealthy),
        faults=tuple(read_fault(text, names) for text in args.fault),
        late_hosts=tuple(read_late_host(text, names) for text in args.late_host),
        host_kinds=tuple(read_host_kind(text, names) for text in args.host_kind),
        chaos_kills=read_integer("--chaos-kills", args.chaos_kills, minimum=0, maximum=100_000),
        chaos_seed=read_chaos_seed(args.chaos_seed),
        restart_controller_after=read_restart_after(args.restart_controller_after),
        controller_down_seconds=read_seconds(
            "--controller-down-seconds", args.controller_down_seconds or "1", allow_zero=True
        ),
        settle_seconds=read_seconds("--settle-seconds", args.settle_seconds),
        live=read_live(args.live),
        policy=policy,
        notify=read_webhook(args.notify),
        hooks=read_hooks(args.hook, policy),
        shape=read_shape(args, names),
        cluster=read_cluster(args),
        clock=read_clock(args, policy),
        **read_pause_moments(args),
    )
    check_flag_needs(args, policy)  # once every value is known to be good
    return options

"""The flags of `brupop simulate`, checked once into a frozen SimulationOptions.

Every timing flag compresses one of the original's intervals so a small fleet rolls in seconds;
a bad flag stops the command with one line naming it and exit code 2.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brupop.domain.reboot_hooks import HookPhase
from brupop.domain.scheduling_policy import concurrency_limit
from brupop.domain.versions import compare_versions, is_version
from brupop.entrypoints.controller.notification_settings import url_problem
from brupop.entrypoints.simulate.fleet_shape import (
    MAX_PODS_PER_NODE,
    MAX_ZONES,
    FleetShape,
    ShapeError,
    parse_pod_counts,
    parse_zones,
)
from brupop.entrypoints.simulate.hook_responder import MAX_HOOKS, EmulatedHook
from brupop.entrypoints.simulate.host_faults import KNOWN_FAULTS
from brupop.entrypoints.simulate.output_paths import PathRefused, picture_path, report_path
from brupop.entrypoints.simulate.policy_file import PolicyFileError, load_policy_file
from brupop.entrypoints.simulate.setting_checks import TimingFlagError, check_timing
from brupop.entrypoints.simulate.timing import TIMING_FLAGS, Timing

UNLIMITED = "unlimited"
ONE_HOUR = 3600.0
ONE_DAY = 86_400.0


class OptionError(ValueError):
    """A flag holds a value simulate cannot use; the message names the flag."""


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
    parser = argparse.ArgumentParser(
        prog="brupop simulate",
        description="Roll a simulated Bottlerocket fleet on this machine: in-memory cluster, "
        "real controller and apiserver, one real agent process per node.",
    )
    _add_fleet_flags(parser)
    _add_output_flags(parser)
    _add_scenario_flags(parser)
    timing = parser.add_argument_group("timing (seconds; defaults compress the original's)")
    for flag in TIMING_FLAGS:
        timing.add_argument(
            f"--{flag.name}", default=None, help=f"{flag.help} (default {flag.default:g})"
        )
    return parser


def _add_fleet_flags(parser: argparse.ArgumentParser) -> None:
    fleet = parser.add_argument_group("fleet")
    fleet.add_argument("--nodes", default="6", help="opted-in nodes to simulate (default 6)")
    fleet.add_argument(
        "--max-concurrent",
        default="1",
        help="nodes allowed outside Idle at once: an integer >= 1 or 'unlimited' (default 1)",
    )
    fleet.add_argument("--from-version", default="1.19.0", help="version every node starts on")
    fleet.add_argument("--to-version", default="1.20.0", help="version the hosts are offered")
    fleet.add_argument(
        "--apiclient",
        default=None,
        help="executable the agents call as apiclient (default: the bundled host emulator)",
    )
    fleet.add_argument(
        "--zones",
        default=None,
        metavar="N",
        help=f"label the nodes topology.kubernetes.io/zone zone-a, zone-b, ... round robin "
        f"(1..{MAX_ZONES}; default: no zone label)",
    )
    fleet.add_argument(
        "--pods-per-node",
        default=None,
        metavar="SPEC",
        help=f"workload pods (ReplicaSet, 100m CPU and 128Mi each) per node instead of the "
        f"standard web and cache pods, e.g. node-01=0,default=4 (0..{MAX_PODS_PER_NODE} each; "
        f"default 0 for nodes not named)",
    )


def _add_output_flags(parser: argparse.ArgumentParser) -> None:
    output = parser.add_argument_group("output")
    output.add_argument("--report", default=None, help="write a JSON report to this path")
    output.add_argument(
        "--timeline",
        default=None,
        metavar="FILE",
        help="draw the rollout's timeline (one row per node, nodes in flight below) to FILE, "
        ".svg or .png",
    )
    output.add_argument("--log-dir", default=None, help="one log file per agent in this directory")
    output.add_argument(
        "--work-dir",
        default=None,
        help="keep certificates, tokens and host state here (default: a temporary directory, "
        "removed after a successful run)",
    )
    output.add_argument("--timeout", default="120", help="give up after this many seconds")
    output.add_argument(
        "--live",
        choices=("auto", "on", "off"),
        default="auto",
        help="live progress view: on a terminal (auto), always, or never",
    )


def _add_scenario_flags(parser: argparse.ArgumentParser) -> None:
    scenario = parser.add_argument_group("scenarios")
    scenario.add_argument(
        "--block-drain",
        action="append",
        default=[],
        metavar="NODE",
        help="put a pod on NODE whose PodDisruptionBudget never allows its eviction",
    )
    scenario.add_argument(
        "--do-not-disrupt-pod",
        action="append",
        default=[],
        metavar="NODE",
        help='run a pod annotated karpenter.sh/do-not-disrupt: "true" on NODE',
    )
    scenario.add_argument(
        "--unhealthy",
        action="append",
        default=[],
        metavar="NODE",
        help="after its reboot NODE stays NotReady and its DaemonSet pod never becomes Ready "
        "(a health gate in --policy then fails it)",
    )
    scenario.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NODE=FAULT",
        help=f"make NODE's host emulator misbehave; FAULT is one of {', '.join(KNOWN_FAULTS)}",
    )
    scenario.add_argument(
        "--chaos-kills", default="0", help="kill agents (SIGKILL or SIGTERM) this many times"
    )
    scenario.add_argument("--chaos-seed", default=None, help="seed for the chaos schedule")
    scenario.add_argument(
        "--restart-controller-after",
        default=None,
        metavar="SECONDS",
        help="stop the controller this long after the first node starts updating, "
        "then start a new one",
    )
    scenario.add_argument(
        "--controller-down-seconds", default="1", help="how long the controller stays stopped"
    )
    scenario.add_argument(
        "--policy",
        default=None,
        metavar="FILE",
        help="a BottlerocketUpdatePolicy (YAML, named default) to apply before the rollout",
    )
    scenario.add_argument(
        "--pause-at",
        default=None,
        metavar="SECONDS",
        help="set spec.paused of the policy this long after the rollout begins (the first node "
        "leaves Idle), as brupop pause would",
    )
    scenario.add_argument(
        "--resume-at",
        default=None,
        metavar="SECONDS",
        help="clear spec.paused this long after the rollout begins, as brupop resume would",
    )
    scenario.add_argument(
        "--notify",
        default=None,
        metavar="URL",
        help="send the run's notifications (json format) to this webhook, as the controller's "
        "NOTIFICATION_WEBHOOK_<n>_URL would",
    )
    scenario.add_argument(
        "--hook",
        action="append",
        default=[],
        metavar="NAME[:SECONDS|:never]",
        help="answer the --policy's reboot hook NAME on every node SECONDS (default 0) after "
        "the controller asks, or never",
    )
    scenario.add_argument(
        "--settle-seconds",
        default="3",
        help="end once no node has changed state for this long and none is updating",
    )


def parse_options(argv: list[str]) -> SimulationOptions:
    """Parse and validate `argv`; OptionError names the first bad flag."""
    args = build_parser().parse_args(argv)
    nodes = _integer("--nodes", args.nodes, minimum=1, maximum=500)
    names = SimulationOptions(nodes=nodes).node_names()
    from_version = _version("--from-version", args.from_version)
    to_version = _version("--to-version", args.to_version)
    if compare_versions(to_version, from_version) <= 0:
        raise OptionError(
            f"--to-version: {to_version} must be newer than --from-version {from_version}"
        )
    timing = _timing(args)
    policy = _policy(args.policy)
    return SimulationOptions(
        nodes=nodes,
        max_concurrent=_max_concurrent(args.max_concurrent),
        from_version=from_version,
        to_version=to_version,
        apiclient=_executable("--apiclient", args.apiclient),
        report=_output(report_path, args.report),
        timeline=_output(picture_path, args.timeline),
        log_dir=Path(args.log_dir) if args.log_dir else None,
        work_dir=Path(args.work_dir) if args.work_dir else None,
        timeout=_seconds("--timeout", args.timeout, most=ONE_DAY),
        timing=timing,
        block_drain=tuple(_node("--block-drain", name, names) for name in args.block_drain),
        unhealthy=tuple(_node("--unhealthy", name, names) for name in args.unhealthy),
        faults=tuple(_fault(text, names) for text in args.fault),
        chaos_kills=_integer("--chaos-kills", args.chaos_kills, minimum=0, maximum=100_000),
        chaos_seed=(
            None
            if args.chaos_seed is None
            else _integer("--chaos-seed", args.chaos_seed, minimum=0, maximum=2**63)
        ),
        restart_controller_after=(
            None
            if args.restart_controller_after is None
            else _seconds("--restart-controller-after", args.restart_controller_after, most=ONE_DAY)
        ),
        controller_down_seconds=_seconds(
            "--controller-down-seconds", args.controller_down_seconds, allow_zero=True
        ),
        settle_seconds=_seconds("--settle-seconds", args.settle_seconds),
        live={"auto": None, "on": True, "off": False}[args.live],
        policy=policy,
        notify=_webhook(args.notify),
        hooks=_hooks(args.hook, policy),
        shape=_shape(args, names),
        **_pause_moments(args),
    )


def _policy(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        return load_policy_file(Path(raw).expanduser())
    except PolicyFileError as error:
        raise OptionError(f"--policy: {error}") from None


def _shape(args: argparse.Namespace, names: list[str]) -> FleetShape:
    try:
        zones, pods = parse_zones(args.zones), parse_pod_counts(args.pods_per_node, names)
    except ShapeError as error:
        raise OptionError(str(error)) from None
    keep = (_node("--do-not-disrupt-pod", name, names) for name in args.do_not_disrupt_pod)
    return FleetShape(zones, pods, tuple(dict.fromkeys(keep)))


def _hooks(raw: list[str], policy: dict[str, Any] | None) -> tuple[EmulatedHook, ...]:
    """Each `--hook NAME[:SECONDS|:never]`; NAME must be one of the policy's hooks."""
    if len(raw) > MAX_HOOKS:
        raise OptionError(f"--hook: at most {MAX_HOOKS} hooks")
    hooks = ((policy or {}).get("spec") or {}).get("hooks") or {}
    named = {
        HookPhase.BEFORE_REBOOT: set(hooks.get("beforeReboot") or ()),
        HookPhase.AFTER_REBOOT: set(hooks.get("afterReboot") or ()),
    }
    emulated: list[EmulatedHook] = []
    for text in raw:
        name, _, when = text.partition(":")
        phases = frozenset(phase for phase, names in named.items() if name in names)
        if not phases:
            raise OptionError(
                f"--hook: {name!r} is not a hook of the --policy (spec.hooks.beforeReboot or "
                "afterReboot)"
            )
        if when == "never":
            emulated.append(EmulatedHook(name, None, phases))
        else:
            seconds = _seconds("--hook", when or "0", allow_zero=True, most=ONE_DAY)
            emulated.append(EmulatedHook(name, seconds, phases))
    return tuple(emulated)


def _webhook(raw: str | None) -> str | None:
    if raw is None:
        return None
    problem = url_problem(raw.strip())
    if problem:
        raise OptionError(f"--notify: {problem}")
    return raw.strip()


def _pause_moments(args: argparse.Namespace) -> dict[str, float | None]:
    pause_at, resume_at = (
        None if raw is None else _seconds(flag, raw, allow_zero=True, most=ONE_DAY)
        for flag, raw in (("--pause-at", args.pause_at), ("--resume-at", args.resume_at))
    )
    if pause_at is not None and resume_at is not None and resume_at <= pause_at:
        raise OptionError(f"--resume-at: {args.resume_at} must be later than --pause-at")
    return {"pause_at": pause_at, "resume_at": resume_at}


def _timing(args: argparse.Namespace) -> Timing:
    """The timing flags, each finite and bounded, obeying the rules of the settings they feed."""
    given = {
        flag.name: _seconds(f"--{flag.name}", raw, allow_zero=flag.allow_zero, most=flag.most)
        for flag in TIMING_FLAGS
        if (raw := getattr(args, flag.name.replace("-", "_"))) is not None
    }
    timing = Timing.from_flags(given)
    if timing["restart-backoff"] > timing["restart-backoff-max"]:
        raise OptionError("--restart-backoff: must not exceed --restart-backoff-max")
    try:
        check_timing(timing)
    except TimingFlagError as error:
        raise OptionError(str(error)) from None
    return timing


def _integer(flag: str, raw: str, *, minimum: int, maximum: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise OptionError(f"{flag}: {raw!r} is not an integer") from None
    if not minimum <= value <= maximum:
        raise OptionError(f"{flag}: {value} is outside {minimum}..{maximum}")
    return value


def _max_concurrent(raw: str) -> int | None:
    if raw.strip().lower() == UNLIMITED:
        return None
    return _integer("--max-concurrent", raw, minimum=1, maximum=1_000_000)


def _seconds(flag: str, raw: str, *, allow_zero: bool = False, most: float = ONE_HOUR) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise OptionError(f"{flag}: {raw!r} is not a number of seconds") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise OptionError(f"{flag}: {raw!r} is not a finite number of seconds")
    if value < 0 or (value == 0 and not allow_zero):
        raise OptionError(f"{flag}: {raw} must be {'>= 0' if allow_zero else '> 0'}")
    if value > most:
        raise OptionError(f"{flag}: {raw} is more than the {most:g} s a simulation allows")
    return value


def _output(check: Callable[[str], Path], raw: str | None) -> Path | None:
    """An output file's path (--report, --timeline), checked now; none when not asked for."""
    if not raw:
        return None
    try:
        return check(raw)
    except PathRefused as error:
        raise OptionError(str(error)) from None


def _version(flag: str, raw: str) -> str:
    if not is_version(raw):
        raise OptionError(f"{flag}: {raw!r} is not a semantic version like 1.20.0")
    return raw


def _executable(flag: str, raw: str | None) -> Path | None:
    if raw is None:
        return None
    path = Path(raw).expanduser().resolve()
    if not path.is_file() or not os.access(path, os.X_OK):
        raise OptionError(f"{flag}: {raw} is not an executable file")
    return path


def _node(flag: str, name: str, names: list[str]) -> str:
    if name not in names:
        raise OptionError(f"{flag}: no node {name!r} in this fleet ({names[0]}..{names[-1]})")
    return name


def _fault(text: str, names: list[str]) -> tuple[str, str]:
    node, sep, fault = text.partition("=")
    if not sep:
        raise OptionError(f"--fault: {text!r} is not NODE=FAULT")
    if fault not in KNOWN_FAULTS:
        raise OptionError(f"--fault: {fault!r} is not one of {', '.join(KNOWN_FAULTS)}")
    return _node("--fault", node, names), fault

"""The flags of `brupop plan`, read and checked once into PlanOptions.

The fleet is the live cluster's (a kubeconfig, as kubectl finds it, or `--kubeconfig FILE`)
or, with `--simulate`, the fleet `brupop simulate` would build from the same fleet flags
(`--nodes`, `--zones`, `--pods-per-node`, ...). A bad flag raises PlanFlagError naming it
(exit 2); a fleet flag without `--simulate` is one, as it would have no effect.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from brupop.cli.argument_types import node_name
from brupop.cli.cluster_loader import (
    ClusterTarget,
    add_namespace_flag,
    add_target_flags,
    target_of,
)
from brupop.cli.command_parser import CommandParser
from brupop.cli.fleet_description.flag_values import OptionError, read_integer, read_node
from brupop.cli.fleet_description.fleet_flags import (
    read_max_concurrent,
    read_shape,
    read_versions,
)
from brupop.cli.fleet_description.fleet_shape import FleetShape
from brupop.cli.fleet_description.policy_file import PolicyFileError, load_policy_file
from brupop.domain.policy.policy_object import UpdatePolicy, policy_from_object
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.starting.release_quorum import QUORUM_MOST

LONGEST_DURATION_SECONDS = 7 * 86_400
_FLEET_FLAGS = {
    "nodes": "--nodes",
    "zones": "--zones",
    "pods_per_node": "--pods-per-node",
    "from_version": "--from-version",
    "to_version": "--to-version",
    "do_not_disrupt_pod": "--do-not-disrupt-pod",
    "block_drain": "--block-drain",
}


class PlanFlagError(ValueError):
    """A flag `brupop plan` cannot use; the message names it."""


@dataclass(frozen=True)
class SimulatedFleet:
    """The fleet `brupop simulate` would build with these fleet flags."""

    nodes: int = 6
    from_version: str = "1.19.0"
    to_version: str = "1.20.0"
    shape: FleetShape = field(default_factory=FleetShape)
    block_drain: tuple[str, ...] = ()

    def node_names(self) -> list[str]:
        """node-01 ... node-NN, as simulate names them."""
        width = max(2, len(str(self.nodes)))
        return [f"node-{index:0{width}d}" for index in range(1, self.nodes + 1)]


@dataclass(frozen=True)
class PlanOptions:
    """Everything one plan needs to know, checked."""

    namespace: str
    limit: ConcurrencyLimit | None
    """--max-concurrent; None: ask the controller (a live cluster), else 1."""
    target: ClusterTarget = field(default_factory=ClusterTarget)
    simulated: SimulatedFleet | None = None
    policy: UpdatePolicy | None = None
    duration_seconds: int | None = None
    staged_seconds: int | None = None
    """--staged-duration: the turn of a node prepared ahead; None: as long as any update."""
    controller_node: str | None = None
    release_age_quorum: int | None = None
    json: bool = False
    timeline: str | None = None
    timeout: float = 10.0


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="brupop plan",
        description="Show, before a rollout, the order the controller will update the nodes "
        "in, when each one is expected to start and finish, and what holds it back. It reads, "
        "and never writes.",
    )
    add_target_flags(parser)
    add_namespace_flag(parser, "brupop's namespace")
    parser.add_argument("--policy", metavar="FILE", help="plan with this update policy (YAML)")
    parser.add_argument(
        "--duration", metavar="SECONDS", help="each update's duration (default: the learned p90)"
    )
    parser.add_argument(
        "--staged-duration",
        metavar="SECONDS",
        help="the turn of a node whose host holds its version prepared ahead (pre-staging: "
        "drain, activate, reboot; no download) (default: as long as any update)",
    )
    parser.add_argument(
        "--max-concurrent",
        help="the controller's MAX_CONCURRENT_UPDATE, used when the policy sets no "
        "maxConcurrent: an integer >= 1 or 'unlimited' (default: what the controller's "
        "/status reports, else 1)",
    )
    parser.add_argument("--controller-node", type=node_name, help="the node the controller runs on")
    parser.add_argument(
        "--release-age-quorum",
        metavar="N",
        help="the controller's RELEASE_AGE_QUORUM: nodes that must report a version before its "
        "release age starts (default: 10%% of the opted-in nodes, at least 2)",
    )
    parser.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    parser.add_argument("--timeline", metavar="FILE", help="draw the plan to FILE (.svg or .png)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per API call")
    fleet = parser.add_argument_group("a simulated fleet (as brupop simulate builds it)")
    fleet.add_argument("--simulate", action="store_true", help="plan a simulated fleet")
    fleet.add_argument("--nodes", help="opted-in nodes (default 6)")
    fleet.add_argument("--zones", metavar="N", help="zone labels zone-a, zone-b, ...")
    fleet.add_argument("--pods-per-node", metavar="SPEC", help="e.g. node-01=0,default=4")
    fleet.add_argument("--from-version", help="version every node runs (default 1.19.0)")
    fleet.add_argument("--to-version", help="version the hosts are offered (default 1.20.0)")
    fleet.add_argument("--do-not-disrupt-pod", action="append", metavar="NODE")
    fleet.add_argument("--block-drain", action="append", metavar="NODE")
    return parser


def read_options(args: argparse.Namespace) -> PlanOptions:
    """The checked options; PlanFlagError names the first bad flag."""
    try:
        given = args.max_concurrent is not None
        limit = ConcurrencyLimit(read_max_concurrent(args.max_concurrent)) if given else None
        simulated = _simulated(args)
        duration = None
        if args.duration is not None:
            duration = read_integer(
                "--duration", args.duration, minimum=1, maximum=LONGEST_DURATION_SECONDS
            )
        staged = None
        if args.staged_duration is not None:
            staged = read_integer(
                "--staged-duration",
                args.staged_duration,
                minimum=1,
                maximum=LONGEST_DURATION_SECONDS,
            )
        quorum = None
        if args.release_age_quorum is not None:
            quorum = read_integer(
                "--release-age-quorum", args.release_age_quorum, minimum=1, maximum=QUORUM_MOST
            )
    except OptionError as error:
        raise PlanFlagError(str(error)) from None
    if not 0 < args.timeout <= 300:
        raise PlanFlagError(f"--timeout: {args.timeout:g} is outside 0..300 seconds")
    if simulated is not None and (args.kubeconfig is not None or args.context is not None):
        flag = "--kubeconfig" if args.kubeconfig is not None else "--context"
        raise PlanFlagError(f"{flag}: a --simulate fleet reads no cluster")
    return PlanOptions(
        namespace=args.namespace,
        limit=limit,
        target=target_of(args),
        simulated=simulated,
        policy=_policy(args.policy),
        duration_seconds=duration,
        staged_seconds=staged,
        controller_node=args.controller_node,
        release_age_quorum=quorum,
        json=args.json,
        timeline=args.timeline,
        timeout=args.timeout,
    )


def _simulated(args: argparse.Namespace) -> SimulatedFleet | None:
    given = [flag for key, flag in _FLEET_FLAGS.items() if getattr(args, key) is not None]
    if not args.simulate:
        if given:
            raise OptionError(f"{given[0]}: describes a simulated fleet; add --simulate")
        return None
    nodes = read_integer("--nodes", args.nodes or "6", minimum=1, maximum=500)
    names = SimulatedFleet(nodes=nodes).node_names()
    args.from_version = args.from_version or "1.19.0"
    args.to_version = args.to_version or "1.20.0"
    args.do_not_disrupt_pod = args.do_not_disrupt_pod or []
    from_version, to_version = read_versions(args)
    blocked = tuple(read_node("--block-drain", n, names) for n in args.block_drain or ())
    return SimulatedFleet(nodes, from_version, to_version, read_shape(args, names), blocked)


def _policy(raw: str | None) -> UpdatePolicy | None:
    if raw is None:
        return None
    try:
        return policy_from_object(load_policy_file(Path(raw).expanduser()))
    except PolicyFileError as error:
        raise PlanFlagError(f"--policy: {error}") from None

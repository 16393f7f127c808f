"""What `brupop pause` and `brupop resume` share: their options, how they reach the Kubernetes
API (in a pod, its service account; else $KUBECONFIG or ~/.kube/config, as `brupop status`),
and the one line that says what went wrong and what to do (exit 1)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass

from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.resources.nodes import KubernetesNodeRepository
from brupop.adapters.kubernetes.resources.update_policies import (
    PLURAL,
    KubernetesUpdatePolicyRepository,
)
from brupop.cli.argument_types import node_name
from brupop.cli.cluster_loader import (
    ClusterUnusable,
    add_namespace_flag,
    add_target_flags,
    add_timeout_flag,
    reach_cluster,
    refuse,
    target_of,
)
from brupop.cli.command_parser import CommandParser
from brupop.cli.program_name import command_name
from brupop.cli.status.terminal import complain
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME
from brupop.domain.printable import printable_lines
from brupop.entrypoints.invocation import EXIT_FATAL, EXIT_OK
from brupop.ports.errors import (
    ConflictError,
    ForbiddenError,
    NotFoundError,
    PortError,
    UnauthorizedError,
    UnavailableError,
)
from brupop.services.pausing import FleetChange, FleetPause, NodeChange

LONGEST_TIMEOUT_SECONDS = 300.0


@dataclass(frozen=True)
class Verb:
    """One of the two commands: what it does to the fleet and to a node, and how it says so."""

    name: str  # "pause" or "resume"
    on_fleet: Callable[[FleetPause], FleetChange]
    on_node: Callable[[KubernetesNodeRepository, str], NodeChange]
    fleet_line: Callable[[FleetChange, str], str]
    node_line: Callable[[NodeChange], str]
    description: str


def parser(verb: Verb) -> argparse.ArgumentParser:
    """`brupop <verb> [--node NODE] [--namespace NS] [--timeout SECONDS]`."""
    parser = CommandParser(prog=f"brupop {verb.name}", description=verb.description)
    parser.add_argument(
        "--node",
        type=node_name,
        help=f"{verb.name} this node only (its brupop.bottlerocket.aws/paused label)",
    )
    add_namespace_flag(
        parser, "brupop's namespace, where the policy `default` lives (default %(default)s)"
    )
    add_timeout_flag(parser, LONGEST_TIMEOUT_SECONDS, "each API answer")
    add_target_flags(parser)
    return parser


def run(verb: Verb, argv: list[str]) -> int:
    """Parse, act, print one line: 0 when done, 1 when the cluster could not be changed or the
    change is not in force (the policy's spec is one the controller cannot use), 2 on a bad
    flag or a kubeconfig that cannot be used."""
    args = parser(verb).parse_args(argv)
    try:
        configuration = reach_cluster(target_of(args), args.timeout)
    except ClusterUnusable as error:
        return refuse(verb.name, error)
    api_client = ApiClient(configuration)
    calls = ApiCalls(
        api_client, request_timeout_seconds=args.timeout, connect_timeout_seconds=args.timeout
    )
    try:
        if args.node is not None:
            change = verb.on_node(KubernetesNodeRepository(calls), args.node)
            line = verb.node_line(change)
        else:
            policies = KubernetesUpdatePolicyRepository(calls, args.namespace)
            fleet = verb.on_fleet(FleetPause(policies))
            if fleet.policy is not None and fleet.policy.spec is None:
                print(
                    f"{command_name(verb.name)}: {not_in_force(verb, fleet, args.namespace)}",
                    file=sys.stderr,
                )
                return EXIT_FATAL
            line = verb.fleet_line(fleet, args.namespace)
    except PortError as error:
        where = Where(str(configuration.host), args.namespace, args.node)
        complain(f"{command_name(verb.name)}: {advice(error, where)}")
        return EXIT_FATAL
    finally:
        api_client.close()
    print(printable_lines(line))  # it names what the cluster holds: no terminal controls
    return EXIT_OK


def not_in_force(verb: Verb, change: FleetChange, namespace: str) -> str:
    """One line: the write was made, but the controller cannot use the spec (a window in an
    unknown time zone, say), so it keeps its last good policy and the write is not in force."""
    paused = "true" if verb.name == "pause" else "false"
    policy = change.policy
    problem = " ".join(((policy and policy.problem) or "it does not validate").split())
    name = policy.name if policy is not None else DEFAULT_POLICY_NAME
    return (
        f"spec.paused={paused} written to policy {name} in namespace {namespace}, "
        f"but the controller cannot use that spec ({problem}) and keeps its last good policy "
        f"until it is fixed (kubectl edit {PLURAL} {name} -n {namespace})"
    )


@dataclass(frozen=True)
class Where:
    """What the command was pointed at, for the advice."""

    host: str
    namespace: str
    node: str | None


def advice(error: PortError, where: Where) -> str:
    """One line: what failed and what to do about it."""
    api = f"the Kubernetes API at {where.host}"
    if isinstance(error, UnauthorizedError | ForbiddenError):
        return f"{api} refused ({error}): {_rights_needed(where)}"
    if isinstance(error, NotFoundError):
        if where.node is not None:
            return f"{api} has no node {where.node!r} (kubectl get nodes)"
        return (
            f"{api} has no BottlerocketUpdatePolicy resource in namespace {where.namespace!r}: "
            "is brupop (with its policy CRD) installed there? (pass --namespace)"
        )
    if isinstance(error, UnavailableError):
        return f"cannot reach {api} ({error}): check your kubeconfig's current context"
    if isinstance(error, ConflictError):
        return f"{error}: someone else keeps changing it; run the command again"
    return f"{api} refused the change ({error})"


def _rights_needed(where: Where) -> str:
    if where.node is not None:
        return "your kubeconfig's user needs `get` and `patch` on `nodes`"
    return (
        f"your kubeconfig's user needs `get`, `create`, `patch` and `delete` on `{PLURAL}` "
        f"and `patch` on `{PLURAL}/status` in {where.namespace}"
    )

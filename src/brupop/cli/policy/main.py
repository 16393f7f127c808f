"""`brupop policy lint [--policy FILE]`: the rules of the update policy that do nothing on this
cluster's opted-in nodes, one line each naming the field.

It reads the Nodes and the `default` policy (or `--policy FILE`, checked as `brupop plan` checks
it) and writes nothing. The checks are `policy_lint`'s, the ones `brupop plan` notes and `brupop
doctor`'s `policy rules` fails on. Exit codes: 0 every rule acts (or there is no policy); 1 a
rule does nothing, or the cluster could not be read; 2 a bad flag, kubeconfig or policy file.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from brupop.cli.argument_types import dns_label, seconds_up_to
from brupop.cli.cluster_loader import ClusterUnusable, add_target_flags, refuse, target_of
from brupop.cli.command_parser import CommandParser
from brupop.cli.fleet_description.policy_file import PolicyFileError, load_policy_file
from brupop.cli.plan.fleet_sources import live_cluster
from brupop.cli.program_name import command_name
from brupop.cli.status.terminal import complain, show
from brupop.domain.policy.effective_policy import resolve_policy
from brupop.domain.policy.policy_lint import lint_policy
from brupop.domain.policy.policy_object import UpdatePolicy, policy_from_object
from brupop.domain.printable import printable
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.entrypoints.pod_namespace import pod_namespace
from brupop.ports.cluster.update_policy_repository import UpdatePolicyRepository
from brupop.ports.errors import NotFoundError, PortError

EXIT_OK, EXIT_RULE_DOES_NOTHING, EXIT_USAGE = 0, 1, 2
ERROR_MAX_LENGTH = 200


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="brupop policy", description="Commands about the update policy.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="lint")
    lint = actions.add_parser(
        "lint",
        prog="brupop policy lint",
        help="name the policy's rules that do nothing on this cluster's opted-in nodes",
        description="Name, one line each, the rules of the update policy that do nothing on "
        "this cluster's opted-in nodes. It reads, and never writes.",
    )
    add_target_flags(lint)
    lint.add_argument("--namespace", type=dns_label, default=pod_namespace(), help="brupop's")
    lint.add_argument(
        "--policy", metavar="FILE", help="lint this policy (YAML), not the one in force"
    )
    lint.add_argument("--timeout", type=seconds_up_to(300.0), default=10.0, help="seconds per call")
    return parser


def main(argv: list[str]) -> int:
    """Lint; the exit code."""
    args = _parser().parse_args(argv)
    try:
        given = _policy_file(args.policy)
    except PolicyFileError as error:
        return _fail(f"--policy: {error}", EXIT_USAGE)
    try:
        cluster = live_cluster(target_of(args), args.namespace, args.timeout)
    except ClusterUnusable as error:
        return refuse("policy lint", error)
    try:
        nodes = cluster.nodes.list().items
        policy = given if given is not None else _in_force(cluster.policies)
    except PortError as error:
        said = printable(" ".join(str(error).split()), ERROR_MAX_LENGTH)
        return _fail(f"cannot read the cluster: {said}", EXIT_RULE_DOES_NOTHING)
    finally:
        cluster.close()
    if policy is None:
        show(f"no policy object `default` in {args.namespace}: no rule to lint")
        return EXIT_OK
    findings = lint_policy(resolve_policy(policy), nodes, datetime.now(UTC))
    for finding in findings:
        show(printable(str(finding)))
    if findings:
        return EXIT_RULE_DOES_NOTHING
    opted_in = sum(1 for n in nodes if n.labels.get(OPT_IN_LABEL) == OPT_IN_VALUE)
    show(f"every rule acts on the {opted_in} opted-in nodes")
    return EXIT_OK


def _policy_file(raw: str | None) -> UpdatePolicy | None:
    return None if raw is None else policy_from_object(load_policy_file(Path(raw).expanduser()))


def _in_force(policies: UpdatePolicyRepository) -> UpdatePolicy | None:
    """The `default` policy (None: none, or no policy CRD: the controller runs without)."""
    try:
        return policies.read().default
    except NotFoundError:
        return None


def _fail(message: str, code: int) -> int:
    complain(f"{command_name('policy lint')}: {message}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

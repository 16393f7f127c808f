"""`brupop status [--url URL] [--namespace NS] [-o table|json] [--timeline FILE]`: ask a
controller for every node's row, or draw the rollout's timeline from the shadows and Events.

Without `--url` it goes through the Kubernetes API's service proxy, configured like kubectl (in
a pod, its service account; else $KUBECONFIG or ~/.kube/config). With no configuration at all
it tries a port-forward's address, and otherwise says how to get one. Through the API it also
reads the `default` update policy, whose phase and message become the table's first line.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from kubernetes.client import Configuration

from brupop.cli.argument_types import http_url
from brupop.cli.cluster_loader import (
    ClusterTarget,
    ClusterUnusable,
    NoConfiguration,
    add_namespace_flag,
    add_target_flags,
    add_timeout_flag,
    reach_cluster,
    refuse,
    target_of,
)
from brupop.cli.command_parser import CommandParser
from brupop.cli.program_name import command_name
from brupop.cli.status.policy_line import (
    PolicyUnreadable,
    policy_line,
    policy_summary,
    read_policy,
)
from brupop.cli.status.reaching import (
    LOCAL_URL,
    ControllerServiceAddress,
    StatusUnavailable,
    read_through_api,
    read_url,
)
from brupop.cli.status.scheduling_lines import scheduling_lines
from brupop.cli.status.table import format_table
from brupop.cli.status.terminal import complain, printable_document, show
from brupop.cli.status.timeline_command import write_cluster_timeline
from brupop.cli.status.version_lines import version_lines
from brupop.entrypoints.invocation import EXIT_FATAL, EXIT_OK

LONGEST_TIMEOUT_SECONDS = 3600.0


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="brupop status",
        description="Show every node's update state and why it waits (the controller's view).",
    )
    parser.add_argument(
        "--url",
        type=http_url,
        help="the controller's HTTP address (e.g. http://127.0.0.1:8080 through a "
        "port-forward); by default the controller is reached through the Kubernetes API's "
        "service proxy, with kubectl's configuration",
    )
    add_namespace_flag(parser, "brupop's namespace, for the service proxy (default %(default)s)")
    parser.add_argument(
        "-o", "--output", choices=("table", "json"), default="table", help="table or json"
    )
    add_timeout_flag(parser, LONGEST_TIMEOUT_SECONDS, "the controller")
    parser.add_argument(
        "--timeline",
        metavar="FILE",
        help="instead of the table, draw the rollout's timeline (one row per node, nodes in "
        "flight below) from the shadows and their Events to FILE (.svg or .png); needs "
        "brupop[simulate]",
    )
    add_target_flags(parser)
    return parser


def read_status(
    url: str | None, namespace: str, timeout: float, target: ClusterTarget | None = None
) -> dict[str, Any]:
    """The controller's `/status` document, from `url` or through the Kubernetes API of
    `target`; through the API, with the `default` policy's phase and message under `policy`
    when it exists. ClusterUnusable when the kubeconfig cannot be used or does not answer."""
    if url:
        return read_url(url, timeout)
    service = ControllerServiceAddress(namespace)
    try:
        configuration = reach_cluster(target or ClusterTarget(), timeout)
    except NoConfiguration:
        try:
            return read_url(LOCAL_URL, timeout)
        except StatusUnavailable:
            raise StatusUnavailable(
                "no Kubernetes configuration (set KUBECONFIG or create ~/.kube/config) and "
                f"nothing answers at {LOCAL_URL}: configure kubectl for your cluster, or run "
                f"`{service.port_forward_hint()}` and retry (or pass --url)"
            ) from None
    document = read_through_api(configuration, service, timeout)
    if "policy" not in document:
        _add_policy(document, configuration, namespace, timeout)
    return document


def _add_policy(
    document: dict[str, Any], configuration: Configuration, namespace: str, timeout: float
) -> None:
    try:
        policy = read_policy(configuration, namespace, timeout)
    except PolicyUnreadable as error:  # the nodes are still worth showing
        complain(f"{command_name('status')}: {error}")
        return
    if policy is not None:
        document["policy"] = policy_summary(policy)


def main(argv: list[str]) -> int:
    """Print the table (or the JSON document); 1 when the controller cannot be reached, 2 on a
    bad flag or a kubeconfig that cannot be used."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except ClusterUnusable as error:
        return refuse("status", error)


def _run(args: argparse.Namespace) -> int:
    target = target_of(args)
    if args.timeline is not None:
        return write_cluster_timeline(
            args.timeline,
            args.namespace,
            args.timeout,
            read_limit=lambda: str(
                read_status(args.url, args.namespace, args.timeout, target).get(
                    "max_concurrent_update"
                )
            ),
            target=target,
            url=args.url,
        )
    try:
        document = read_status(args.url, args.namespace, args.timeout, target)
    except StatusUnavailable as error:
        complain(f"{command_name('status')}: {error}")
        return EXIT_FATAL
    if args.output == "json":
        show(json.dumps(printable_document(document), indent=2))
        return EXIT_OK
    policy = document.get("policy")
    if isinstance(policy, Mapping):
        show(policy_line(policy))
    for line in scheduling_lines(document.get("scheduling")):
        show(line)
    for line in version_lines(document.get("versions")):
        show(line)
    show(format_table(_rows(document.get("nodes"))))
    return EXIT_OK


def _rows(nodes: object) -> list[Mapping[str, Any]]:
    """The table's rows: the entries of `nodes` that are objects (a malformed answer shows
    what it has rather than a traceback)."""
    return [row for row in nodes if isinstance(row, Mapping)] if isinstance(nodes, list) else []

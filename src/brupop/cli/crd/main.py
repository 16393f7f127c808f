"""`brupop crd [--namespace NS] [--apiserver-service-port PORT] [--kind KIND]`: print the CRDs.

Both CustomResourceDefinitions by default (BottlerocketShadow, then BottlerocketUpdatePolicy),
as YAML documents; `--kind` prints one of them (the chart keeps each in its own file).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import yaml

from brupop.cli.argument_types import dns_label, tcp_port
from brupop.cli.command_parser import CommandParser
from brupop.cli.crd.definition import (
    DEFAULT_APISERVER_SERVICE_PORT,
    custom_resource_definition,
)
from brupop.cli.crd.policy_definition import policy_custom_resource_definition
from brupop.domain.policy.update_policy import KIND as POLICY_KIND
from brupop.domain.shadow import KIND as SHADOW_KIND
from brupop.entrypoints.pod_namespace import DEFAULT_NAMESPACE

KINDS = (SHADOW_KIND, POLICY_KIND)


class _SpelledOutDumper(yaml.SafeDumper):
    """Writes a value used twice in full each time: no `&id001` anchors in a CRD users read."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def render(
    namespace: str = DEFAULT_NAMESPACE,
    apiserver_service_port: int = DEFAULT_APISERVER_SERVICE_PORT,
    kinds: Sequence[str] = KINDS,
) -> str:
    """The CRDs of `kinds` as YAML documents, in a stable order (the committed copies are
    this text)."""
    documents = []
    for kind in KINDS:
        if kind not in kinds:
            continue
        crd = (
            custom_resource_definition(namespace, apiserver_service_port)
            if kind == SHADOW_KIND
            else policy_custom_resource_definition()
        )
        documents.append(
            yaml.dump(
                crd, Dumper=_SpelledOutDumper, sort_keys=False, width=10_000, explicit_start=True
            )
        )
    return "".join(documents)


def main(argv: list[str]) -> int:
    """Print the CRDs; exit 2 on bad arguments."""
    parser = CommandParser(
        prog="brupop crd",
        description="Print brupop's CustomResourceDefinitions as YAML.",
    )
    parser.add_argument(
        "--namespace", type=dns_label, default=DEFAULT_NAMESPACE, help="brupop's namespace"
    )
    parser.add_argument(
        "--apiserver-service-port",
        type=tcp_port,
        default=DEFAULT_APISERVER_SERVICE_PORT,
        help="port of the brupop-apiserver Service (the conversion webhook)",
    )
    parser.add_argument(
        "--kind", choices=KINDS, help="print only this kind's CRD (default: every kind)"
    )
    args = parser.parse_args(argv)
    sys.stdout.write(render(args.namespace, args.apiserver_service_port, _chosen(args.kind)))
    return 0


def _chosen(kind: str | None) -> Sequence[str]:
    return KINDS if kind is None else (kind,)

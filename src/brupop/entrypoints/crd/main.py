"""`brupop crd [--namespace NS] [--apiserver-service-port PORT]`: print the CRD as YAML."""

from __future__ import annotations

import argparse
import sys

import yaml

from brupop.entrypoints.argument_types import dns_label, tcp_port
from brupop.entrypoints.crd.definition import (
    DEFAULT_APISERVER_SERVICE_PORT,
    custom_resource_definition,
)
from brupop.entrypoints.pod_namespace import DEFAULT_NAMESPACE


def render(
    namespace: str = DEFAULT_NAMESPACE,
    apiserver_service_port: int = DEFAULT_APISERVER_SERVICE_PORT,
) -> str:
    """The CRD as one YAML document, in a stable order (the committed copy is this text)."""
    crd = custom_resource_definition(namespace, apiserver_service_port)
    return yaml.safe_dump(crd, sort_keys=False, width=10_000, explicit_start=True)


def main(argv: list[str]) -> int:
    """Print the BottlerocketShadow CRD; exit 2 on bad arguments."""
    parser = argparse.ArgumentParser(
        prog="brupop crd",
        description="Print the BottlerocketShadow CustomResourceDefinition as YAML.",
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
    args = parser.parse_args(argv)
    sys.stdout.write(render(args.namespace, args.apiserver_service_port))
    return 0

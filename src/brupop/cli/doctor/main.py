"""`brupop doctor [--namespace NS] [--controller-url URL] [--timeout S]`: check a live install,
one line per check (PASS or FAIL, and what to do; SKIP when a check it needs failed), through
the kubeconfig's cluster.

It reads only; the one thing it creates is SubjectAccessReviews, which change nothing. Exit 0
when every check passes, 1 when one fails, 2 on a bad flag or a kubeconfig it cannot use.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from kubernetes.client import ApiClient

from brupop.cli.argument_types import http_url
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
from brupop.cli.crd.definition import CRD_NAME as SHADOW_CRD
from brupop.cli.crd.policy_definition import CRD_NAME as POLICY_CRD
from brupop.cli.doctor.agents import check_agents
from brupop.cli.doctor.certificates import check_certificate
from brupop.cli.doctor.crds import check_policy_crd, check_shadow_crd
from brupop.cli.doctor.dependencies import Check, run_in_order
from brupop.cli.doctor.metrics import check_metrics_at, check_metrics_by_proxy
from brupop.cli.doctor.policy_rules import check_policy_rules
from brupop.cli.doctor.presence import (
    check_namespace,
    check_network_policies,
    check_policy,
)
from brupop.cli.doctor.rbac import check_rbac
from brupop.cli.doctor.reading import ClusterReader, KubernetesReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed
from brupop.cli.doctor.webhook import check_conversion_webhook
from brupop.cli.doctor.workloads import (
    APISERVER,
    CONTROLLER,
    check_deployment,
    check_leader,
)
from brupop.cli.status.terminal import show
from brupop.entrypoints.invocation import EXIT_OK

EXIT_CHECK_FAILED = 1
"""At least one check failed (or the Kubernetes API could not be reached)."""


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="brupop doctor",
        description="Check a live brupop install: one line per check, and what to do.",
    )
    add_namespace_flag(parser, "brupop's namespace (default %(default)s)")
    parser.add_argument(
        "--controller-url",
        type=http_url,
        help="the controller's HTTP address for the metrics check (e.g. http://127.0.0.1:8080 "
        "through a port-forward); by default, the Kubernetes API's service proxy",
    )
    add_timeout_flag(parser, 120.0, "each answer")
    add_target_flags(parser)
    return parser


def run_checks(
    reader: ClusterReader,
    namespace: str,
    metrics: Callable[[], DoctorFinding],
    now: Callable[[], datetime],
) -> Iterator[DoctorFinding]:
    """Every check, in the order an install comes up; stops after the first when the
    Kubernetes API cannot be reached at all, and skips a check whose prerequisite failed."""
    reached = _check_api(reader)
    yield reached
    if not reached.ok:
        return
    yield from run_in_order(_checks(reader, namespace, metrics, now))


def _checks(
    reader: ClusterReader,
    namespace: str,
    metrics: Callable[[], DoctorFinding],
    now: Callable[[], datetime],
) -> list[Check]:
    """The checks after the API's, each with the checks it needs."""
    ns = ("namespace",)
    return [
        Check("namespace", "namespace", lambda: check_namespace(reader, namespace)),
        Check("shadow crd", f"crd {SHADOW_CRD}", lambda: check_shadow_crd(reader, namespace)),
        Check("policy crd", f"crd {POLICY_CRD}", lambda: check_policy_crd(reader)),
        Check("certificate", "certificate", lambda: check_certificate(reader, namespace), ns),
        Check(
            "apiserver",
            f"deployment {APISERVER}",
            lambda: check_deployment(reader, namespace, APISERVER),
            ns,
        ),
        Check(
            "webhook",
            "conversion webhook",
            lambda: check_conversion_webhook(reader, namespace),
            ("shadow crd", "apiserver"),
        ),
        Check(
            "controller",
            f"deployment {CONTROLLER}",
            lambda: check_deployment(reader, namespace, CONTROLLER),
            ns,
        ),
        Check(
            "leader",
            "controller leader",
            lambda: check_leader(reader, namespace, now()),
            ("controller",),
        ),
        Check(
            "agents", "agents", lambda: check_agents(reader, namespace), ("shadow crd", "namespace")
        ),
        Check("rbac", "rbac", lambda: check_rbac(reader, namespace), ns),
        Check("netpol", "network policies", lambda: check_network_policies(reader, namespace), ns),
        Check(
            "policy",
            "update policy",
            lambda: check_policy(reader, namespace),
            ("policy crd", "namespace"),
        ),
        Check(
            "policy rules",
            "policy rules",
            lambda: check_policy_rules(reader, namespace, now()),
            ("policy",),
        ),
        Check("metrics", "metrics", metrics, ("controller",)),
    ]


def _check_api(reader: ClusterReader) -> DoctorFinding:
    try:
        version = reader.get("/version")
    except ReadRefused as error:
        return failed(
            "kubernetes api", str(error), "check your kubeconfig's context (kubectl cluster-info)"
        )
    return passed("kubernetes api", f"reached, {version.get('gitVersion', 'unknown version')}")


def main(argv: list[str]) -> int:
    """Print one line per check; 0 when all pass, 1 when one fails (or the API does not
    answer), 2 on a bad flag or a kubeconfig that cannot be used."""
    args = _parser().parse_args(argv)
    try:
        configuration = reach_cluster(target_of(args), args.timeout)
    except ClusterUnusable as error:
        return refuse("doctor", error)
    with ApiClient(configuration) as api_client:
        reader = KubernetesReader(api_client, args.timeout)
        url, timeout = args.controller_url, args.timeout

        def metrics() -> DoctorFinding:
            if url:
                return check_metrics_at(url, timeout)
            return check_metrics_by_proxy(reader, args.namespace)

        ok = True
        for result in run_checks(reader, args.namespace, metrics, lambda: datetime.now(UTC)):
            ok = ok and result.ok
            show(result.line())
            sys.stdout.flush()
    return EXIT_OK if ok else EXIT_CHECK_FAILED

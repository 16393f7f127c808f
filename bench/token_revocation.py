#!/usr/bin/env python3
"""Benchmark: how soon brupop's apiserver refuses an agent's token once what it is bound to is
deleted, on a real kube-apiserver (with local verification, its default).

    bench/token_revocation.py [--samples 10]

Starts its own control plane (`scripts/control-plane up`, stopped with `down` at the end) unless
given --kubeconfig, a kwok Node, and the apiserver app on loopback HTTPS as
tests/realcluster/test_token_verification.py serves it. For each sample of each case a new agent
pod gets a TokenRequest token, which the apiserver accepts (its decision cached for 600 s, its pod
and account in the watches' mirrors); then the case's delete, and the node-uid endpoint polled
every --poll-ms until it refuses. The figure is the time from the delete call's return to the
first refused answer:
- pod_deleted: the pod deleted (grace period 0); refused with 403 once the pod watch drops it;
- service_account_deleted: the agent ServiceAccount deleted; 401 once the account watch sees it;
- service_account_recreated: the account deleted and at once re-created under its name (a new
  UID), timed from the delete's return; 401.
Prints one JSON object and writes it to bench/results/token_revocation.json (or --out).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client, config
from rig import emit, machine, percentile, progress, send_logs_to
from work_dir import measure_in_work_dir

from brupop.services.apiserver.authorization.authorizer import AGENT_SERVICE_ACCOUNT

REPOSITORY = Path(__file__).resolve().parents[1]
RESULTS = REPOSITORY / "bench" / "results"
sys.path.insert(0, str(REPOSITORY))

from tests.realcluster.conftest import (  # noqa: E402
    KWOK_ANNOTATION,
    SCRIPT,
    ControlPlane,
    node_ready,
)
from tests.realcluster.test_token_verification import (  # noqa: E402
    Apiserver,
    agent_pod,
    start_apiserver,
    token_of,
)
from tests.support.polling import wait_until  # noqa: E402

NAMESPACE = "brupop-bench-revocation"
NODE = "kwok-revocation-node"
REFUSED = {"pod_deleted": 403, "service_account_deleted": 401, "service_account_recreated": 401}
GIVE_UP_SECONDS = 60.0  # far under the cached decision's 600 s: a refusal comes from a watch


def delete_pod(plane: ControlPlane, pod: client.V1Pod) -> None:
    plane.core.delete_namespaced_pod(pod.metadata.name, NAMESPACE, grace_period_seconds=0)


def delete_account(plane: ControlPlane, _pod: client.V1Pod) -> None:
    plane.core.delete_namespaced_service_account(AGENT_SERVICE_ACCOUNT, NAMESPACE)


def recreate_account(plane: ControlPlane, pod: client.V1Pod) -> None:
    """Delete the account, then create it again under its name; only the delete is timed."""
    delete_account(plane, pod)
    meta = client.V1ObjectMeta(name=AGENT_SERVICE_ACCOUNT)
    plane.core.create_namespaced_service_account(NAMESPACE, client.V1ServiceAccount(metadata=meta))


REVOKE: dict[str, Callable[[ControlPlane, client.V1Pod], None]] = {
    "pod_deleted": delete_pod,
    "service_account_deleted": delete_account,
    "service_account_recreated": recreate_account,
}


def mirrored(apiserver: Apiserver, plane: ControlPlane, pod: client.V1Pod) -> bool:
    """The apiserver's watches hold the pod and its account as the cluster has them now."""
    held = apiserver.mirror.pod(pod.metadata.name)
    account = apiserver.mirror.accounts.account(AGENT_SERVICE_ACCOUNT)
    current = plane.core.read_namespaced_service_account(AGENT_SERVICE_ACCOUNT, NAMESPACE)
    return (
        held is not None
        and held.uid == pod.metadata.uid
        and account is not None
        and account.uid == current.metadata.uid
    )


@dataclass
class Sample:
    """One revocation: delete to first refusal, the answers that still accepted the token after
    the delete, and one accepted (cached) request's own time before it: the figure's grain."""

    refused_ms: float
    accepted_after_delete: int
    accepted_request_ms: float


def one_sample(
    case: str, plane: ControlPlane, apiserver: Apiserver, index: int, poll_seconds: float
) -> Sample:
    """Create a pod and its token, have it accepted, then revoke it as `case` does."""
    pod = agent_pod(plane, NAMESPACE, f"brupop-agent-{case.replace('_', '-')}-{index}", NODE)
    token = token_of(plane, pod)
    wait_until(lambda: mirrored(apiserver, plane, pod), "pod and account mirrored", seconds=30)
    assert apiserver.status(token) == 200, "the token is not accepted before its revocation"
    began = time.monotonic()
    assert apiserver.status(token) == 200, "the token's cached decision is not kept"
    accepted_ms = (time.monotonic() - began) * 1000
    REVOKE[case](plane, pod)
    deleted = time.monotonic()
    accepted = 0
    while (status := apiserver.status(token)) == 200:
        accepted += 1
        if time.monotonic() - deleted > GIVE_UP_SECONDS:
            raise RuntimeError(f"{case}: still accepted {GIVE_UP_SECONDS:g} s after the delete")
        time.sleep(poll_seconds)
    refused = time.monotonic()
    if status != REFUSED[case]:
        raise RuntimeError(f"{case}: refused with {status}, not {REFUSED[case]}")
    if case != "pod_deleted":  # the next sample's pod is the only one of its account
        delete_pod(plane, pod)
    return Sample((refused - deleted) * 1000, accepted, accepted_ms)


def summary(samples: list[Sample]) -> dict[str, Any]:
    ordered = sorted(s.refused_ms for s in samples)
    return {
        "samples": len(ordered),
        "p50_ms": round(statistics.median(ordered), 1),
        "p99_ms": round(percentile(ordered, 0.99), 1),
        "max_ms": round(ordered[-1], 1),
        "min_ms": round(ordered[0], 1),
        "all_ms": [round(s.refused_ms, 1) for s in samples],
        "accepted_after_delete": [s.accepted_after_delete for s in samples],
        "accepted_request_p50_ms": round(
            statistics.median(s.accepted_request_ms for s in samples), 1
        ),
    }


def served(plane: ControlPlane, work: Path) -> Iterator[Apiserver]:
    """The namespace, a Ready kwok Node, and the apiserver app over them."""
    plane.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    meta = client.V1ObjectMeta(name=NODE, annotations=KWOK_ANNOTATION)
    plane.core.create_node(client.V1Node(metadata=meta))
    wait_until(lambda: node_ready(plane.core, NODE), f"node {NODE} Ready", seconds=60)
    yield from start_apiserver(plane, NAMESPACE, NODE, work / "tls")


def measure(args: argparse.Namespace, kubeconfig: Path, work: Path) -> dict[str, Any]:
    load_at_start = os.getloadavg()[0]
    api = config.new_client_from_config(config_file=str(kubeconfig))
    plane = ControlPlane(kubeconfig.parent, kubeconfig, api)
    latencies: dict[str, list[Sample]] = {case: [] for case in REVOKE}
    with api:
        for apiserver in served(plane, work):
            for index in range(args.samples):
                for case in REVOKE:  # interleaved: each case sees the same load
                    latencies[case].append(
                        one_sample(case, plane, apiserver, index, args.poll_ms / 1000)
                    )
                progress(
                    f"sample {index + 1}/{args.samples}: "
                    + ", ".join(f"{c} {v[-1].refused_ms:.1f} ms" for c, v in latencies.items())
                )
    return {
        "benchmark": "token_revocation",
        "machine": machine() | {"load_average_1min_at_start": round(load_at_start, 2)},
        "load_average_1min_at_end": round(os.getloadavg()[0], 2),
        "poll_ms": args.poll_ms,
        "method": "per sample: a new agent pod's token accepted (decision cached, pod and"
        " account mirrored), then the delete; time from the delete call's return to the first"
        " refused answer of the node-uid endpoint, polled every poll_ms; accepted_after_delete:"
        " the answers still 200 after the delete, per sample; accepted_request_p50_ms: one"
        " accepted (cached) request's own time, the figure's grain",
        "delete_to_refused": {case: summary(values) for case, values in latencies.items()},
    }


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """`measure` on the given control plane, or on one started here and always stopped."""
    send_logs_to(work / "apiserver.log")
    if args.kubeconfig is not None:
        return measure(args, args.kubeconfig, work)
    folder = work / "control-plane"
    try:
        progress("starting the control plane")
        subprocess.run([SCRIPT, "up", folder], check=True, stdout=sys.stderr, timeout=600)
        return measure(args, folder / "kubeconfig", work)
    finally:
        subprocess.run([SCRIPT, "down", folder], check=False, stdout=sys.stderr, timeout=300)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=10, help="per case")
    parser.add_argument("--poll-ms", type=float, default=10.0)
    parser.add_argument("--kubeconfig", type=Path, help="reuse this control plane")
    parser.add_argument("--out", type=Path, default=RESULTS / "token_revocation.json")
    args = parser.parse_args()
    if args.samples < 1 or args.poll_ms <= 0:
        parser.error("--samples must be at least 1 and --poll-ms above 0")
    emit(measure_in_work_dir("brupop-token-revocation-", lambda work: run(args, work)), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

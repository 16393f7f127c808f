"""The health gate's checks, each turning what the cluster shows into a CheckResult.

A check that is not (yet) satisfied is PENDING: right after a reboot a node takes a while to
turn Ready and its workloads a while to come back, so only the gate's timeout turns it into a
failure. The facts come through ports (NodeRepository, PodRepository, WorkloadReplicas,
HttpProber); these functions only judge them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from brupop.domain.cluster.objects import Node, Pod, PodPhase
from brupop.domain.safety.evicted_workloads import WorkloadRef
from brupop.domain.safety.health_gate import CheckOutcome, CheckResult, GateCheck

NAMED_MAX = 3  # a detail names a few objects, then counts the rest


def _names(items: Sequence[str]) -> str:
    more = f" and {len(items) - NAMED_MAX} more" if len(items) > NAMED_MAX else ""
    return ", ".join(items[:NAMED_MAX]) + more


def node_ready(node: Node) -> CheckResult:
    """Passed when the Node's Ready condition is True."""
    if node.ready:
        return CheckResult(GateCheck.NODE_READY, CheckOutcome.PASSED, "the node is Ready")
    return CheckResult(GateCheck.NODE_READY, CheckOutcome.PENDING, "the node is not Ready")


def is_daemon_set_pod(pod: Pod) -> bool:
    """The pod is controlled by a DaemonSet."""
    return any(owner.controller and owner.kind == "DaemonSet" for owner in pod.owners)


def daemon_set_pods_ready(pods: Sequence[Pod]) -> CheckResult:
    """Passed when every DaemonSet pod on the node (`pods`: all the node's pods) is Running
    and Ready; a node without DaemonSet pods passes."""
    waiting = sorted(
        f"{pod.namespace}/{pod.name}"
        for pod in pods
        if is_daemon_set_pod(pod) and not (pod.ready and pod.phase is PodPhase.RUNNING)
    )
    if waiting:
        return CheckResult(
            GateCheck.DAEMON_SET_PODS_READY,
            CheckOutcome.PENDING,
            f"DaemonSet pods not Ready: {_names(waiting)}",
        )
    return CheckResult(
        GateCheck.DAEMON_SET_PODS_READY, CheckOutcome.PASSED, "every DaemonSet pod is Ready"
    )


def evicted_workloads_recovered(
    before: Mapping[WorkloadRef, int] | None, ready_now: Mapping[WorkloadRef, int | None]
) -> CheckResult:
    """Passed when every workload recorded before the drain has at least as many ready
    replicas now (`ready_now`: None for a workload that no longer exists, which has nothing to
    recover). Nothing recorded (no drain, or no workload evicted) passes."""
    check = GateCheck.EVICTED_WORKLOADS_RECOVERED
    if not before:
        return CheckResult(check, CheckOutcome.PASSED, "no evicted workload was recorded")
    short = []
    for ref, count in sorted(before.items()):
        ready = ready_now.get(ref, 0)  # a workload not looked up counts as not recovered
        if ready is not None and ready < count:
            short.append(f"{ref} ({ready}/{count} ready)")
    if short:
        return CheckResult(check, CheckOutcome.PENDING, f"not recovered: {_names(short)}")
    return CheckResult(
        check, CheckOutcome.PASSED, f"{len(before)} evicted workload(s) have their replicas back"
    )


@dataclass(frozen=True)
class ProbeAnswer:
    """What one HTTP probe got: a status code, or the error that kept it from getting one."""

    status: int | None = None
    error: str | None = None


def http_probe(index: int, url: str, expect_status: int, answer: ProbeAnswer) -> CheckResult:
    """Passed when the probe of `url` answered `expect_status`."""
    if answer.status == expect_status:
        return CheckResult(
            GateCheck.HTTP_PROBE, CheckOutcome.PASSED, f"GET {url} answered {answer.status}", index
        )
    got = f"answered {answer.status}" if answer.status is not None else f"failed: {answer.error}"
    return CheckResult(
        GateCheck.HTTP_PROBE,
        CheckOutcome.PENDING,
        f"GET {url} {got} (expected {expect_status})",
        index,
    )

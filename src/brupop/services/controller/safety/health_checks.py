"""Run the health gate's enabled checks for one node, over the cluster ports and the prober.

Each check reads what it needs and is judged by domain/safety/gate_checks.py. A read that fails (the
API is unavailable, the node is gone) leaves that check PENDING with the error as its detail:
the gate then waits, and fails the node only if its timeout passes first. So does a probe
whose URL cannot be made from the Node (an InternalIP that is no IP address: its kubelet
writes it), and one the pass has no time left for: each probe's timeout is cut to the pass's
`seconds_left`. The alert gate's state, read once per pass by `read_alert_gate`, joins the
results when an alert gate is set. A probe's error is bounded and cleaned of terminal controls
before it becomes a detail (and so a REASON).
"""

from __future__ import annotations

from collections.abc import Callable

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.probe_url import ProbeUrlError, fill_probe_template
from brupop.domain.policy.update_policy import HealthGateSpec
from brupop.domain.printable import printable
from brupop.domain.safety.alert_gate import AlertGateState
from brupop.domain.safety.evicted_workloads import EvictedWorkloadsError, record_on
from brupop.domain.safety.gate_checks import (
    ProbeAnswer,
    daemon_set_pods_ready,
    evicted_workloads_recovered,
    http_probe,
    node_ready,
)
from brupop.domain.safety.health_gate import CheckOutcome, CheckResult, GateCheck, enabled_checks
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.cluster.workload_replicas import WorkloadReplicas
from brupop.ports.errors import PortError
from brupop.ports.monitoring.http_prober import HttpProber

PROBE_SECONDS_MIN = 0.1  # a probe with less time than this left waits for the next pass
PROBE_ERROR_MAX_LENGTH = 200
UNPROBED = "not probed in this pass (the other checks took its time); next pass"
SecondsLeft = Callable[[], float]


class HealthChecks:
    """The checks of the gate, for the controller's pass."""

    def __init__(
        self,
        *,
        nodes: NodeRepository,
        pods: PodRepository,
        workloads: WorkloadReplicas,
        prober: HttpProber,
    ) -> None:
        self._nodes = nodes
        self._pods = pods
        self._workloads = workloads
        self._prober = prober

    def run(
        self,
        node_name: str,
        gate: HealthGateSpec,
        alerts: AlertGateState | None = None,
        *,
        seconds_left: SecondsLeft | None = None,
    ) -> list[CheckResult]:
        """Every enabled check's result for `node_name`, in the gate's order; the alert gate's
        last when there is one. No probe waits longer than `seconds_left()` (no limit: None)."""
        try:
            node: Node | None = self._nodes.get(node_name)
        except PortError as error:
            node, unread = None, f"the node cannot be read: {error}"
        results = []
        for check, index in enabled_checks(gate):
            if node is None:
                results.append(CheckResult(check, CheckOutcome.PENDING, unread, index))
                continue
            results.append(self._one(node, gate, check, index, seconds_left))
        if alerts is not None:
            results.append(alerts.as_check())
        return results

    def _one(
        self,
        node: Node,
        gate: HealthGateSpec,
        check: GateCheck,
        index: int | None,
        seconds_left: SecondsLeft | None,
    ) -> CheckResult:
        runs: dict[GateCheck, Callable[[], CheckResult]] = {
            GateCheck.NODE_READY: lambda: node_ready(node),
            GateCheck.DAEMON_SET_PODS_READY: lambda: daemon_set_pods_ready(
                self._pods.list_on_node(node.name)
            ),
            GateCheck.EVICTED_WORKLOADS_RECOVERED: lambda: self._workloads_back(node),
            GateCheck.HTTP_PROBE: lambda: self._probe(node, gate, index or 0, seconds_left),
        }
        try:
            return runs[check]()
        except PortError as error:
            return CheckResult(check, CheckOutcome.PENDING, f"cannot tell: {error}", index)

    def _workloads_back(self, node: Node) -> CheckResult:
        try:
            before = record_on(node.annotations)
        except EvictedWorkloadsError as error:
            return CheckResult(
                GateCheck.EVICTED_WORKLOADS_RECOVERED,
                CheckOutcome.PASSED,
                f"the record of evicted workloads cannot be read ({error}); nothing to compare",
            )
        ready_now = {ref: self._workloads.ready_replicas(ref) for ref in before or {}}
        return evicted_workloads_recovered(before, ready_now)

    def _probe(
        self, node: Node, gate: HealthGateSpec, index: int, seconds_left: SecondsLeft | None
    ) -> CheckResult:
        probe = gate.http_probes[index]
        if "{node_ip}" in probe.url and not node.internal_ip:
            return _pending(index, "the node has no InternalIP yet")
        try:
            url = fill_probe_template(probe.url, node.name, node.internal_ip or "")
        except ProbeUrlError as error:
            return _pending(index, f"cannot probe: {error}")
        timeout = float(probe.timeout_seconds)
        if seconds_left is not None:
            timeout = min(timeout, seconds_left())
        if timeout < PROBE_SECONDS_MIN:
            return _pending(index, UNPROBED)
        answer = self._prober.probe(url, timeout)
        if answer.error is not None:
            cleaned = printable(answer.error, PROBE_ERROR_MAX_LENGTH)
            answer = ProbeAnswer(status=answer.status, error=cleaned)
        return http_probe(index, url, probe.expect_status, answer)


def _pending(index: int, detail: str) -> CheckResult:
    return CheckResult(GateCheck.HTTP_PROBE, CheckOutcome.PENDING, detail, index)

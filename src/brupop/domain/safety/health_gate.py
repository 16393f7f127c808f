"""The post-reboot health gate's decision for one node in MonitoringUpdate.

The controller runs the enabled checks (each gives a CheckResult) and asks `decide_gate` what
to do with the node: let it go Idle (every check passed), keep it where it is (some check has
not passed yet, and the gate's time is not up), or fail it (a check failed outright, or time
ran out while one was still pending). Pure: `now` and the moment monitoring started come in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from brupop.domain.policy.update_policy import HealthGateSpec
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import later


class GateCheck(StrEnum):
    """A kind of check, named as the halt reason and the failures metric name it."""

    NODE_READY = "nodeReady"
    DAEMON_SET_PODS_READY = "daemonSetPodsReady"
    EVICTED_WORKLOADS_RECOVERED = "evictedWorkloadsRecovered"
    HTTP_PROBE = "httpProbe"
    ALERT_GATE = "alertGate"


class CheckOutcome(StrEnum):
    """One check's answer at one moment."""

    PASSED = "passed"
    PENDING = "pending"  # not yet: it may still pass before the gate times out
    FAILED = "failed"  # no: the node fails the gate now, whatever the time


@dataclass(frozen=True)
class CheckResult:
    """What one check found; `detail` is a short sentence for the REASON column and Events."""

    check: GateCheck
    outcome: CheckOutcome
    detail: str = ""
    index: int | None = None  # which HTTP probe, when there are several

    @property
    def name(self) -> str:
        """`httpProbe[1]` for the second probe, else the check's own name."""
        return self.check.value if self.index is None else f"{self.check.value}[{self.index}]"


class GateVerdict(StrEnum):
    """What the controller does with the node."""

    PASS = "pass"
    WAIT = "wait"
    FAIL = "fail"


@dataclass(frozen=True)
class GateDecision:
    """The verdict, the check it is about (None when the gate passed) and when time runs out."""

    verdict: GateVerdict
    deadline: datetime
    check: CheckResult | None = None
    timed_out: bool = False

    @property
    def message(self) -> str:
        """One sentence for a person: what passed, what is awaited, or what failed."""
        if self.verdict is GateVerdict.PASS or self.check is None:
            return "health gate passed"
        detail = f": {self.check.detail}" if self.check.detail else ""
        if self.verdict is GateVerdict.WAIT:
            return f"health gate waiting for {self.check.name}{detail}"
        late = ""
        if self.timed_out:
            late = f" (still pending at the deadline {self.deadline.isoformat(timespec='seconds')})"
        return f"health gate failed on {self.check.name}{detail}{late}"


def enabled_checks(gate: HealthGateSpec) -> tuple[tuple[GateCheck, int | None], ...]:
    """The checks a gate asks for, in the order they are run and reported."""
    checks: list[tuple[GateCheck, int | None]] = []
    if gate.require_node_ready:
        checks.append((GateCheck.NODE_READY, None))
    if gate.require_daemon_set_pods_ready:
        checks.append((GateCheck.DAEMON_SET_PODS_READY, None))
    if gate.require_evicted_workloads_recovered:
        checks.append((GateCheck.EVICTED_WORKLOADS_RECOVERED, None))
    checks.extend((GateCheck.HTTP_PROBE, index) for index in range(len(gate.http_probes)))
    return tuple(checks)


def in_gate(shadow: Shadow) -> bool:
    """The node is where the gate holds it: asked for, and reporting, MonitoringUpdate."""
    status = shadow.status
    return (
        shadow.spec.state is UpdateState.MONITORING_UPDATE
        and status is not None
        and status.current_state is UpdateState.MONITORING_UPDATE
    )


def gate_started_at(shadow: Shadow) -> datetime | None:
    """When the gate's time began for a node in the gate: when the controller asked it for
    MonitoringUpdate (the spec's transition timestamp, kept in the shadow, so a controller
    restart does not restart the gate). None when the node is not in the gate."""
    if not in_gate(shadow):
        return None
    return shadow.spec.state_transition_timestamp


def decide_gate(
    results: Sequence[CheckResult],
    *,
    monitoring_since: datetime,
    timeout_seconds: float,
    now: datetime,
) -> GateDecision:
    """The gate's decision for a node that reached MonitoringUpdate at `monitoring_since`.

    A failed check fails the node at once; otherwise every check must have passed; a check
    still pending when `timeout_seconds` have gone by fails the node, named as the culprit.
    The first failed (else the first pending) check in `results` order is the one named.
    """
    deadline = later(monitoring_since, timedelta(seconds=timeout_seconds))
    failed = next((r for r in results if r.outcome is CheckOutcome.FAILED), None)
    if failed is not None:
        return GateDecision(GateVerdict.FAIL, deadline, failed)
    pending = next((r for r in results if r.outcome is CheckOutcome.PENDING), None)
    if pending is None:
        return GateDecision(GateVerdict.PASS, deadline)
    if now >= deadline:
        return GateDecision(GateVerdict.FAIL, deadline, pending, timed_out=True)
    return GateDecision(GateVerdict.WAIT, deadline, pending)

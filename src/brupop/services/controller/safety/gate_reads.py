"""GateReads: what the safety rules ask outside the cluster (Prometheus, then the probes), and
the time one controller tick may spend asking.

A tick runs up to `passes_per_tick` passes (a write that met a conflict asks for another at
once), so a budget per pass would let one tick read for three budgets and outlast the Lease.
The budget is the tick's instead: it starts at the tick's first outside read, the passes after
the first ask nothing again (they take the tick's alert answer and each node's check results,
judged again at their own `now`), and a node the budget had no time for waits for the next
tick, which checks it first. Prometheus gets at most `ALERT_SHARE` of the budget, the probes
what is left, each probe no longer than the time left. The controller derives the budget from
its Lease (ControllerConfig.gate_check_budget_seconds), so a tick ends in time to renew it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from brupop.domain.policy.update_policy import AlertGateSpec, HealthGateSpec
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.safety.alert_gate import AlertGateState
from brupop.domain.safety.health_gate import (
    CheckOutcome,
    CheckResult,
    GateCheck,
    GateDecision,
    GateVerdict,
    decide_gate,
    enabled_checks,
    gate_started_at,
    in_gate,
)
from brupop.domain.shadow import Shadow
from brupop.domain.timestamps import later
from brupop.ports.clock import Clock
from brupop.ports.monitoring.alert_source import AlertSource
from brupop.services.controller.safety.alert_gate_reader import (
    ALERT_TIMEOUT_SECONDS,
    read_alert_gate,
)
from brupop.services.controller.safety.health_checks import HealthChecks

ALERT_READ_SECONDS = 5.0  # Prometheus is asked at most this often, however many passes run
# Prometheus and the HTTP probes can take seconds each, and a tick must write before the
# leader's Lease needs renewing: past this much reading in one tick, the nodes left wait for
# the next tick (which starts with them), and no read is given longer than the budget left.
GATE_CHECKS_BUDGET_SECONDS = 5.0
ALERT_SHARE = 0.5  # of the budget, the most a Prometheus read may take
UNCHECKED = "not checked in this pass (the checks of other nodes took its time); next pass"


class GateJudgement(NamedTuple):
    """A node in its health gate and what the gate decided in this pass."""

    shadow: Shadow
    decision: GateDecision


class _AlertsRead(NamedTuple):
    """The alert gate last asked about, and when (the monotonic clock)."""

    gate: AlertGateSpec
    at: float


@dataclass
class _TickReads:
    """What one tick asked, and when its budget began (the monotonic clock; None: no read
    yet)."""

    began: float | None = None
    alerts: AlertGateState | None = None
    results: dict[str, tuple[HealthGateSpec, list[CheckResult]]] = field(default_factory=dict)


class GateReads:
    """The alert gate's last answer and the checks of the nodes in their gate, asked within
    one budget per tick."""

    def __init__(
        self, checks: HealthChecks, alerts: AlertSource, clock: Clock, budget_seconds: float
    ) -> None:
        self._checks = checks
        self._alerts_source = alerts
        self._clock = clock
        self._budget = budget_seconds
        self._alerts = AlertGateState()
        self._alerts_read: _AlertsRead | None = None
        self._tick: _TickReads | None = None  # None: outside a tick, each pass is its own
        self._pass = _TickReads()
        self._unchecked: set[str] = set()  # gated nodes the last tick had no time to check

    @contextmanager
    def tick(self) -> Iterator[None]:
        """Every pass run inside shares one budget and reads nothing twice."""
        self._tick = _TickReads()
        try:
            yield
        finally:
            self._tick = None

    def start_pass(self) -> None:
        """A pass begins: outside a tick, with a budget of its own."""
        self._pass = self._tick if self._tick is not None else _TickReads()

    def seconds_left(self) -> float:
        """What the budget still allows; it starts running at the first read."""
        reads = self._pass
        if reads.began is None:
            reads.began = self._clock.monotonic()
        return self._budget - (self._clock.monotonic() - reads.began)

    # --- the alert gate --------------------------------------------------------------------

    def alerts(self, gate: AlertGateSpec | None) -> AlertGateState:
        """The alert gate's state: asked at most once per tick and every ALERT_READ_SECONDS."""
        if gate is None:
            self._alerts_read = None
            return AlertGateState()
        if self._pass.alerts is not None:
            return self._pass.alerts
        moment = self._clock.monotonic()
        last = self._alerts_read
        if last is None or last.gate != gate or moment - last.at >= ALERT_READ_SECONDS:
            self.seconds_left()  # the budget starts with this read
            timeout = min(ALERT_TIMEOUT_SECONDS, self._budget * ALERT_SHARE)
            self._alerts = read_alert_gate(self._alerts_source, gate, timeout)
            self._alerts_read = _AlertsRead(gate, moment)
        self._pass.alerts = self._alerts
        return self._alerts

    # --- the health gate ---------------------------------------------------------------------

    def judge(
        self, book: RolloutBook, gate: HealthGateSpec, alerts: AlertGateState | None, now: datetime
    ) -> dict[str, GateJudgement]:
        """The gate's decision for every node in it; the nodes checked earlier in this tick
        are judged again on the same results."""
        gated = [
            (name, shadow)
            for name in sorted(book.holders())
            if (shadow := book.shadow(name)) is not None and in_gate(shadow)
        ]
        gated.sort(key=lambda item: item[0] not in self._unchecked)  # those left last go first
        judged = self._pass.results
        gates: dict[str, GateJudgement] = {}
        for name, shadow in gated:
            since = gate_started_at(shadow) or now
            earlier = judged.get(name)
            if earlier is not None and earlier[0] == gate:
                results = earlier[1]
            elif self.seconds_left() > 0:
                results = self._checks.run(
                    shadow.node_name, gate, alerts, seconds_left=self.seconds_left
                )
                judged[name] = (gate, results)
            else:
                gates[name] = GateJudgement(shadow, _unchecked(gate, since))
                continue
            decision = decide_gate(
                results, monitoring_since=since, timeout_seconds=gate.settle_seconds, now=now
            )
            gates[name] = GateJudgement(shadow, decision)
        self._unchecked = {name for name, _ in gated if name not in judged}
        return gates


def _unchecked(gate: HealthGateSpec, since: datetime) -> GateDecision:
    """A wait for the next tick: the budget had no time left for this node."""
    check, index = next(iter(enabled_checks(gate)), (GateCheck.ALERT_GATE, None))
    waiting = CheckResult(check, CheckOutcome.PENDING, UNCHECKED, index)
    deadline = later(since, timedelta(seconds=gate.settle_seconds))
    return GateDecision(GateVerdict.WAIT, deadline, waiting)

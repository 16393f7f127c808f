"""RolloutSafety: the update policy's safety rules, applied once per controller pass.

`assess` gathers what the pass needs: the rollout's target version (the highest offered), the
alert gate's state (asked at most every `ALERT_READ_SECONDS`), the failures of this rollout
and the halt they lead to (`HaltKeeper`), the canaries and their soak, and the health gate's
verdict for each node in MonitoringUpdate. Only nodes in the gate are checked, each once per
pass, so a pass costs the nodes holding a slot, not the fleet. With no policy object every
rule is off and `assess` returns at once: the controller behaves as it did before policies.

Every outside read of a pass (Prometheus, then the probes) fits in one budget, which the
controller derives from its Lease so the pass ends in time to renew it: Prometheus gets at
most `ALERT_SHARE` of it, the probes what is left, each probe no longer than the time left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from brupop.domain.policy.effective_policy import EffectivePolicy
from brupop.domain.policy.update_policy import AlertGate, HealthGate
from brupop.domain.reason import Explanation
from brupop.domain.reporting.fleet_status import highest_version
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.safety.alert_gate import AlertGateState
from brupop.domain.safety.canary import SoakProgress
from brupop.domain.safety.halt import ERROR_RESET_CHECK, NOT_HALTED, HaltDecision, NodeFailure
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
from brupop.domain.safety.safety_reasons import gate_hold, hook_hold
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.ports.alert_source import AlertSource
from brupop.ports.clock import Clock
from brupop.ports.node_repository import NodeRepository
from brupop.services.controller.safety.alert_gate_reader import (
    ALERT_TIMEOUT_SECONDS,
    read_alert_gate,
)
from brupop.services.controller.safety.canary_keeper import CanaryKeeper
from brupop.services.controller.safety.halt_keeper import HaltKeeper
from brupop.services.controller.safety.health_checks import HealthChecks
from brupop.services.controller.safety.hook_keeper import HookJudgement, HookKeeper

ALERT_READ_SECONDS = 5.0  # Prometheus is asked at most this often, however many passes run
# Prometheus and the HTTP probes can take seconds each, and a pass must write before the
# leader's Lease needs renewing: past this much reading in one pass, the nodes left wait for
# the next pass (which starts with them), and no read is given longer than the budget left.
GATE_CHECKS_BUDGET_SECONDS = 5.0
ALERT_SHARE = 0.5  # of the budget, the most a Prometheus read may take
# An alert gate without a health gate still judges finishing nodes, on the alert alone.
_ALERT_ONLY_GATE = HealthGate(
    require_node_ready=False,
    require_daemon_set_pods_ready=False,
    require_evicted_workloads_recovered=False,
)


@dataclass(frozen=True)
class GatePorts:
    """What the safety rules read outside the shadows: the gate's checks and the alerts."""

    checks: HealthChecks
    alerts: AlertSource


class GateJudgement(NamedTuple):
    """A node in its health gate and what the gate decided in this pass."""

    shadow: Shadow
    decision: GateDecision


class _AlertsRead(NamedTuple):
    """The alert gate last asked about, and when (the monotonic clock)."""

    gate: AlertGate
    at: float


@dataclass(frozen=True)
class SafetyPass:
    """The safety facts of one pass."""

    halt: HaltDecision = NOT_HALTED
    halted_at: datetime | None = None
    alerts: AlertGateState = field(default_factory=AlertGateState)
    gates: Mapping[str, GateJudgement] = field(default_factory=dict)
    canaries: frozenset[str] | None = None  # shadow names; None: every node may start
    soak: SoakProgress | None = None
    hooks: Mapping[str, HookJudgement] = field(default_factory=dict)

    @property
    def soaking(self) -> bool:
        """Canaries are set and have not soaked yet: only they may start."""
        return self.soak is not None and not self.soak.done

    @property
    def may_start(self) -> bool:
        """No halt and no alert holds the fleet."""
        return not self.halt.halted and not self.alerts.holds

    def withheld(self) -> frozenset[str]:
        """Nodes whose next step waits: the gate has not passed, or a reboot hook not answered
        (before the reboot, the step to RebootedIntoUpdate; after it, the step to Idle)."""
        gated = (n for n, g in self.gates.items() if g.decision.verdict is not GateVerdict.PASS)
        hooked = (n for n, h in self.hooks.items() if h.decision.verdict is not GateVerdict.PASS)
        return frozenset((*gated, *hooked))

    def failing(self) -> list[GateJudgement]:
        """The nodes failing their gate in this pass."""
        return [g for g in self.gates.values() if g.decision.verdict is GateVerdict.FAIL]

    def passing(self) -> list[GateJudgement]:
        """The nodes passing their gate in this pass."""
        return [g for g in self.gates.values() if g.decision.verdict is GateVerdict.PASS]

    def hook_failing(self) -> list[HookJudgement]:
        """The nodes whose hooks did not answer in time (and that did not fail their gate)."""
        gates = self.gates
        return [
            hook
            for name, hook in self.hooks.items()
            if hook.decision.verdict is GateVerdict.FAIL
            and (name not in gates or gates[name].decision.verdict is not GateVerdict.FAIL)
        ]

    def gate_holds(self) -> dict[str, Explanation]:
        """REASON of the nodes the gate or a hook keeps waiting (the hook named first)."""
        gates, hooks = self.gates.items(), self.hooks.items()
        holds = {n: h for n, g in gates if (h := gate_hold(g.decision)) is not None}
        holds |= {n: h for n, k in hooks if (h := hook_hold(k.decision)) is not None}
        return holds


QUIET = SafetyPass()
_UNCHECKED = "not checked in this pass (the checks of other nodes took its time); next pass"


class RolloutSafety:
    """The halt ledger, the canaries chosen, the alert gate's last answer, across passes."""

    def __init__(
        self,
        ports: GatePorts | None,
        nodes: NodeRepository,
        clock: Clock,
        *,
        check_budget_seconds: float = GATE_CHECKS_BUDGET_SECONDS,
    ) -> None:
        self._ports = ports
        self._nodes = nodes
        self._clock = clock
        self._budget = check_budget_seconds
        self.halts = HaltKeeper()
        self._alerts = AlertGateState()
        self._alerts_read: _AlertsRead | None = None
        self.canaries = CanaryKeeper(nodes)
        self._hooks = HookKeeper(nodes)
        self._unchecked: set[str] = set()  # gated nodes the last pass had no time to check

    def assess(
        self,
        now: datetime,
        policy: EffectivePolicy,
        book: RolloutBook,
        touched: Iterable[str],
        *,
        leading: bool,
    ) -> SafetyPass:
        """This pass's safety facts; `touched`: the shadows that changed since the last."""
        gate = policy.health_gate or (_ALERT_ONLY_GATE if policy.alert_gate else None)
        if not (policy.halts or gate or policy.canary or policy.hooks):
            self.halts.decide(None, None, now)
            return QUIET
        target = highest_version(book.targets)
        began = self._clock.monotonic()  # the pass's budget for outside reads starts now
        alerts = self._read_alerts(policy.alert_gate)
        # Only the leader counts failures and decides a halt; a follower shows the halt the
        # policy's status holds (HaltKeeper.follow_status), so it never keeps one a resume
        # cleared before it saw it.
        if target is not None and policy.halts and leading:
            self._count_error_resets(book, touched, target, now)
        gates: dict[str, GateJudgement] = {}
        if gate is not None and leading and self._ports is not None:
            with_alerts = alerts if policy.alert_gate is not None else None
            gates = self._judge_gates(book, gate, with_alerts, now, began)
            for shadow, decision in gates.values():
                if decision.verdict is GateVerdict.FAIL and target is not None:
                    self._count_gate_failure(target, shadow, decision, now)
        hooks: dict[str, HookJudgement] = {}
        if leading:  # also with no hooks left: the keeper withdraws what it asked for
            hooks = self._hooks.judge(policy.hooks, book, now)
            for shadow, hook in hooks.values():
                if hook.verdict is GateVerdict.FAIL and target is not None:
                    failure = NodeFailure(shadow.node_name, hook.phase.check, hook.message, now)
                    self.halts.record(target, failure)
        if leading or not policy.halts:
            self.halts.decide(target, policy.halt_after_failures, now)
        failed = self.halts.failed_nodes()
        canaries, soak = self.canaries.facts(policy.canary, book, touched, target, failed, now)
        return SafetyPass(
            halt=self.halts.halt,
            halted_at=self.halts.halted_at,
            alerts=alerts,
            gates=gates,
            canaries=canaries,
            soak=soak,
            hooks=hooks,
        )

    # --- the alert gate --------------------------------------------------------------------

    def _read_alerts(self, gate: AlertGate | None) -> AlertGateState:
        if gate is None or self._ports is None:
            self._alerts_read = None
            return AlertGateState()
        moment = self._clock.monotonic()
        last = self._alerts_read
        if last is None or last.gate != gate or moment - last.at >= ALERT_READ_SECONDS:
            timeout = min(ALERT_TIMEOUT_SECONDS, self._budget * ALERT_SHARE)
            self._alerts = read_alert_gate(self._ports.alerts, gate, timeout)
            self._alerts_read = _AlertsRead(gate, moment)
        return self._alerts

    # --- the health gate and the halt --------------------------------------------------------

    def _judge_gates(
        self,
        book: RolloutBook,
        gate: HealthGate,
        alerts: AlertGateState | None,
        now: datetime,
        began: float,
    ) -> dict[str, GateJudgement]:
        assert self._ports is not None
        gated = [
            (name, shadow)
            for name in sorted(book.holders())
            if (shadow := book.shadow(name)) is not None and in_gate(shadow)
        ]
        # Those not checked last time (the budget ran out) go first.
        gated.sort(key=lambda item: item[0] not in self._unchecked)

        def seconds_left() -> float:
            return self._budget - (self._clock.monotonic() - began)

        gates: dict[str, GateJudgement] = {}
        self._unchecked = set()
        for name, shadow in gated:
            since = gate_started_at(shadow) or now
            if seconds_left() <= 0:
                self._unchecked.add(name)
                check, index = next(iter(enabled_checks(gate)), (GateCheck.ALERT_GATE, None))
                waiting = CheckResult(check, CheckOutcome.PENDING, _UNCHECKED, index)
                decision = GateDecision(
                    GateVerdict.WAIT, since + timedelta(seconds=gate.timeout_seconds), waiting
                )
            else:
                results = self._ports.checks.run(
                    shadow.node_name, gate, alerts, seconds_left=seconds_left
                )
                decision = decide_gate(
                    results, monitoring_since=since, timeout_seconds=gate.timeout_seconds, now=now
                )
            gates[name] = GateJudgement(shadow, decision)
        return gates

    def _count_gate_failure(
        self, target: str, shadow: Shadow, decision: GateDecision, now: datetime
    ) -> None:
        check = decision.check
        name = check.name if check is not None else "healthGate"
        detail = check.detail if check is not None else decision.message
        self.halts.record(target, NodeFailure(shadow.node_name, name, detail, now))

    def _count_error_resets(
        self, book: RolloutBook, touched: Iterable[str], target: str, now: datetime
    ) -> None:
        for name in touched:
            shadow = book.shadow(name)
            status = shadow.status if shadow is not None else None
            if shadow is None or status is None:
                continue
            if status.current_state is UpdateState.ERROR_RESET:
                detail = f"the agent failed on its way to {shadow.spec.state}"
                failure = NodeFailure(shadow.node_name, ERROR_RESET_CHECK, detail, now)
                self.halts.record(target, failure)

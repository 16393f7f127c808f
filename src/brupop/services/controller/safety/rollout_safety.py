"""RolloutSafety: the update policy's safety rules, applied once per controller pass.

`assess` gathers what the pass needs: the rollout's target version (the highest offered), the
alert gate's state, the failures of this rollout and the halt they lead to (`HaltKeeper`), the
canaries and their soak, and the health gate's verdict for each node in MonitoringUpdate. Only
nodes in the gate are checked, each once per tick, so a pass costs the nodes holding a slot,
not the fleet. With no policy object every rule is off and `assess` returns at once: the
controller behaves as it did before policies.

Every outside read (Prometheus, then the probes) of a tick's passes fits in one budget, which
the controller derives from its Lease so the tick ends in time to renew it (`GateReads`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from brupop.domain.policy.effective_policy import EffectivePolicy
from brupop.domain.policy.update_policy import HealthGateSpec
from brupop.domain.reason import Explanation
from brupop.domain.reporting.fleet_status import highest_version
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.safety.alert_gate import AlertGateState
from brupop.domain.safety.canary import SoakProgress
from brupop.domain.safety.halt import ERROR_RESET_CHECK, NOT_HALTED, HaltDecision, NodeFailure
from brupop.domain.safety.health_gate import GateDecision, GateVerdict
from brupop.domain.safety.safety_reasons import gate_hold, hook_hold
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.ports.clock import Clock
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.monitoring.alert_source import AlertSource
from brupop.services.controller.safety.canary_keeper import CanaryKeeper
from brupop.services.controller.safety.gate_reads import (
    GATE_CHECKS_BUDGET_SECONDS,
    GateJudgement,
    GateReads,
)
from brupop.services.controller.safety.halt_keeper import HaltKeeper
from brupop.services.controller.safety.health_checks import HealthChecks
from brupop.services.controller.safety.hook_keeper import HookJudgement, HookKeeper

__all__ = ["QUIET", "GateJudgement", "RolloutSafety", "SafetyPass"]

# An alert gate without a health gate still judges finishing nodes, on the alert alone.
_ALERT_ONLY_GATE = HealthGateSpec(
    require_node_ready=False,
    require_daemon_set_pods_ready=False,
    require_evicted_workloads_recovered=False,
)


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


class RolloutSafety:
    """The halt ledger, the canaries chosen, the alert gate's last answer, across passes."""

    def __init__(
        self,
        checks: HealthChecks,
        alerts: AlertSource,
        nodes: NodeRepository,
        clock: Clock,
        *,
        check_budget_seconds: float = GATE_CHECKS_BUDGET_SECONDS,
    ) -> None:
        self._reads = GateReads(checks, alerts, clock, check_budget_seconds)
        self.halts = HaltKeeper()
        self.canaries = CanaryKeeper(nodes)
        self._hooks = HookKeeper(nodes)

    @contextmanager
    def tick(self) -> Iterator[None]:
        """The passes run inside are one tick's: one budget for their outside reads, and no
        read asked twice (outside a tick, each pass has its own)."""
        with self._reads.tick():
            yield

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
        self._reads.start_pass()
        alerts = self._reads.alerts(policy.alert_gate)
        # Only the leader counts failures and decides a halt; a follower shows the halt the
        # policy's status holds (HaltKeeper.follow_status), so it never keeps one a resume
        # cleared before it saw it.
        if target is not None and policy.halts and leading:
            self._count_error_resets(book, touched, target, now)
        gates: dict[str, GateJudgement] = {}
        if gate is not None and leading:
            with_alerts = alerts if policy.alert_gate is not None else None
            gates = self._reads.judge(book, gate, with_alerts, now)
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

    # --- the halt -----------------------------------------------------------------------------

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
            if shadow is None or status is None or book.is_quarantined(name):
                continue  # a quarantined shadow counts against nobody's budget
            if status.current_state is UpdateState.ERROR_RESET:
                detail = f"the agent failed on its way to {shadow.spec.state}"
                failure = NodeFailure(shadow.node_name, ERROR_RESET_CHECK, detail, now)
                self.halts.record(target, failure)

"""Why a node is held by the rollout's safety rules: the REASON `brupop status` shows for it.

`start_hold` answers for an Idle node that has an update offered and would otherwise be ready
to start: a halt, a pause (of the fleet, or of this node by its label), a firing alert, or
the canaries' soak holds it. `gate_hold` answers for a node the health gate keeps in
MonitoringUpdate. Both fit `waiting_reason.explain`: a reason code and one sentence.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime

from brupop.domain.canary import SoakProgress, may_start
from brupop.domain.halt import NOT_HALTED, HaltDecision
from brupop.domain.health_gate import GateDecision, GateVerdict
from brupop.domain.waiting_reason import Reason

NODE_PAUSED_LABEL = "brupop.bottlerocket.aws/paused"
NODE_PAUSED_VALUE = "true"


def node_paused(labels: Mapping[str, str]) -> bool:
    """The Node carries `brupop.bottlerocket.aws/paused=true` (`brupop pause --node`)."""
    return labels.get(NODE_PAUSED_LABEL, "").lower() == NODE_PAUSED_VALUE


@dataclass(frozen=True)
class SafetyView:
    """The fleet-wide safety facts of one pass."""

    now: datetime
    paused: bool = False
    halt: HaltDecision = NOT_HALTED
    blocked: str | None = None  # the alert gate's reason for holding, None when clear
    canaries: frozenset[str] = frozenset()
    soak: SoakProgress | None = None  # None: no canaries in the policy


def start_hold(
    node_name: str, labels: Mapping[str, str], view: SafetyView
) -> tuple[Reason, str] | None:
    """The safety rule that keeps this node from starting, or None when none does."""
    if view.halt.halted:
        return Reason.HALTED, f"HALTED: {view.halt.message}; `brupop resume` to go on"
    if view.paused:
        return Reason.PAUSED, "PAUSED: the rollout is paused; `brupop resume` to go on"
    if node_paused(labels):
        return Reason.PAUSED, (
            f"PAUSED: this node carries {NODE_PAUSED_LABEL}={NODE_PAUSED_VALUE}; "
            "`brupop resume --node` to go on"
        )
    if view.blocked is not None:
        return Reason.ALERT_HOLD, f"held by the alert gate: {view.blocked}"
    if view.soak is not None and not may_start(node_name, view.canaries, view.soak):
        return Reason.CANARY_SOAK, view.soak.message(view.now)
    return None


def startable(
    candidates: Collection[str], labels: Mapping[str, Mapping[str, str]], view: SafetyView
) -> list[str]:
    """The candidates (in their order) that no safety rule holds."""
    return [name for name in candidates if start_hold(name, labels.get(name, {}), view) is None]


def gate_hold(decision: GateDecision) -> tuple[Reason, str] | None:
    """GATE_PENDING while the gate waits on a check; None once it passed or failed (a failed
    node goes the way of any failure and is explained as one)."""
    if decision.verdict is not GateVerdict.WAIT:
        return None
    until = decision.deadline.isoformat(timespec="seconds")
    return Reason.GATE_PENDING, f"{decision.message} (fails at {until})"

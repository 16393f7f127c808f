"""Why the health gate keeps a node in MonitoringUpdate: the REASON `brupop status` shows for it.

`gate_hold` fits `waiting_reason.explain`: an `Explanation`, a reason code and one sentence. The
holds before a start (halt, pause, alert gate, canary soak) are explained by
`waiting_reason.explain` itself.
"""

from __future__ import annotations

from brupop.domain.reason import Explanation, Reason
from brupop.domain.safety.health_gate import GateDecision, GateVerdict
from brupop.domain.safety.reboot_hooks import HookDecision


def gate_hold(decision: GateDecision) -> Explanation | None:
    """GATE_PENDING while the gate waits on a check; None once it passed or failed (a failed
    node goes the way of any failure and is explained as one)."""
    if decision.verdict is not GateVerdict.WAIT:
        return None
    until = decision.deadline.isoformat(timespec="seconds")
    return Explanation(Reason.GATE_PENDING, f"{decision.message} (fails at {until})")


def hook_hold(decision: HookDecision) -> Explanation | None:
    """HOOK_PENDING, naming the hook waited for, while a reboot hook has not answered."""
    if decision.verdict is not GateVerdict.WAIT:
        return None
    until = decision.deadline.isoformat(timespec="seconds")
    return Explanation(Reason.HOOK_PENDING, f"{decision.message} (fails at {until})")

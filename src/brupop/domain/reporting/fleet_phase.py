"""The fleet's phase and its one-sentence message, as the policy status and `brupop status` show.

Computed from facts the controller already has after a pass. When several apply, the one a
person must act on comes first: Halted (someone must resume), then Paused (someone paused),
then Blocked (an alert fires, or Prometheus cannot be asked), then Soaking (canaries are done
and the others wait out the soak), then Rolling (nodes are updating or about to), else Idle.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from brupop.domain.policy.update_policy_status import PolicyPhase
from brupop.domain.safety.canary import SoakProgress
from brupop.domain.safety.halt import NOT_HALTED, HaltDecision


@dataclass(frozen=True)
class FleetFacts:
    """What the controller knows about the fleet at the end of a pass."""

    now: datetime
    paused: bool = False
    halt: HaltDecision = NOT_HALTED
    blocked: str | None = None  # why no node may start (alert gate), None when nothing blocks
    soak: SoakProgress | None = None  # None: no canaries in the policy
    updating: int = 0  # nodes outside Idle (holding a slot)
    offered: int = 0  # Idle nodes with an update offered, not started yet


class PhaseMessage(NamedTuple):
    """The fleet's phase and the one sentence that explains it."""

    phase: PolicyPhase
    message: str


def _plural(count: int) -> str:
    return f"{count} node{'s' if count != 1 else ''}"


def _finishing(facts: FleetFacts) -> str:
    if not facts.updating:
        return ""
    return f"; {_plural(facts.updating)} finishing the update in progress"


def fleet_phase(facts: FleetFacts) -> PhaseMessage:
    """The phase and one sentence that explains it."""
    if facts.halt.halted:
        return PhaseMessage(
            PolicyPhase.HALTED,
            f"Halted: {facts.halt.message}; no node starts until `brupop resume`"
            f"{_finishing(facts)}.",
        )
    if facts.paused:
        return PhaseMessage(
            PolicyPhase.PAUSED,
            f"Paused: no node starts until `brupop resume`{_finishing(facts)}.",
        )
    if facts.blocked is not None and (facts.offered or facts.updating):
        return PhaseMessage(PolicyPhase.BLOCKED, f"Blocked: {facts.blocked}{_finishing(facts)}.")
    soak = facts.soak
    if soak is not None and not soak.done and soak.all_updated and facts.offered:
        return PhaseMessage(
            PolicyPhase.SOAKING,
            f"Soaking: {soak.message(facts.now)}; {_plural(facts.offered)} wait for the soak.",
        )
    if facts.updating or facts.offered:
        canaries = ""
        if soak is not None and not soak.done:
            canaries = f"; {soak.message(facts.now)}"
        return PhaseMessage(
            PolicyPhase.ROLLING,
            f"Rolling: {_plural(facts.updating)} updating, {facts.offered} waiting{canaries}.",
        )
    return PhaseMessage(PolicyPhase.IDLE, "Idle: every node runs the version it is offered.")

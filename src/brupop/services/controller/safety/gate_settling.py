"""Settle the health gate's verdicts of one pass, after its plan was written.

A node that passed was let go Idle by the plan (its advance was not withheld): once that write
landed, the time it spent in the gate is observed and an Event says it passed. A node that
failed is written back to Idle as a failure (`RolloutWriter.fail_gate`: crash count, Event
naming the check) and counted by the failures metric. A write that meets a change made
meanwhile is left for the next pass, which judges the node again. A node whose reboot hooks
did not answer in time fails the same way (`RolloutWriter.fail_hook`); an Event says when a
phase's hooks were asked to act (the timeline's hook bars).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from brupop.domain.reporting.waiting_reason import GateFailureRecord
from brupop.domain.shadow import Shadow
from brupop.ports.errors import ConflictError, NotFoundError
from brupop.ports.monitoring.safety_metrics import SafetyMetrics
from brupop.services.controller.safety.rollout_safety import SafetyPass
from brupop.services.controller.writing.rollout_writer import RolloutWriter, WriteOutcome


def settle_gates(
    safety: SafetyPass,
    outcome: WriteOutcome,
    writer: RolloutWriter,
    metrics: SafetyMetrics,
    now: datetime,
) -> None:
    """Observe the passes that were written and write the failures (into `outcome`)."""
    written = {shadow.name for shadow in outcome.stored}
    for shadow, decision in safety.passing():
        began = shadow.spec.state_transition_timestamp or now  # when the gate began
        if shadow.name in written:
            metrics.observe_health_gate((now - began).total_seconds())
            writer.note_gate_passed(shadow, decision.message)
    for shadow, decision in safety.failing():
        if not _write_failure(writer.fail_gate, shadow, decision.message, outcome, now):
            continue
        began = shadow.spec.state_transition_timestamp or now
        metrics.observe_health_gate((now - began).total_seconds())
        check = decision.check.check.value if decision.check is not None else "healthGate"
        metrics.count_health_gate_failure(check)
    for shadow, hook in safety.hooks.values():
        if hook.asked:
            writer.note_hooks_asked(shadow, hook)
    for shadow, hook in safety.hook_failing():
        if _write_failure(writer.fail_hook, shadow, hook.message, outcome, now):
            metrics.count_health_gate_failure(hook.phase.check)


def _write_failure(
    fail: Callable[[Shadow, str, datetime], Shadow | None],
    shadow: Shadow,
    message: str,
    outcome: WriteOutcome,
    now: datetime,
) -> bool:
    """Write one failure back to Idle through `fail` and count it in `outcome`; False when
    nothing was written (a change made meanwhile, left for the next pass, or nothing to do)."""
    try:
        stored = fail(shadow, message, now)
    except (ConflictError, NotFoundError):
        outcome.conflicts += 1
        outcome.conflicted.append(shadow.name)
        return False
    if stored is None:
        return False
    outcome.stored.append(stored)
    outcome.written += 1
    outcome.gate_failed[shadow.name] = GateFailureRecord(message, now)
    return True

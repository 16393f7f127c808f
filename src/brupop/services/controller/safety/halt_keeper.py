"""HaltKeeper: the failures of the current rollout, the halt they lead to, and its release.

The ledger lives in the leading controller (`RolloutFailures`: distinct nodes that failed the
health gate or ended in ErrorReset while the fleet moved to one target version). A halt is
sticky: once `haltAfterFailures` nodes failed, no node starts until someone resumes, even if
the target version changes meanwhile.

The policy's status is where the halt is shared. A halt this controller finds there (written
by an earlier leader, or before a restart) is taken over; a halt it wrote that a later
version of the status no longer shows was cleared by `brupop resume`, which releases it and
empties the ledger. A controller that restarts takes over the halt but not the failures below
the threshold: those are counted again from zero.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.safety.halt import (
    NOT_HALTED,
    HaltDecision,
    NodeFailure,
    RolloutFailures,
    decide_halt,
)


class HaltKeeper:
    """The ledger of failures and the halt, kept in step with the policy's status."""

    def __init__(self) -> None:
        self.ledger = RolloutFailures()
        self.halt: HaltDecision = NOT_HALTED
        self.halted_at: datetime | None = None
        self._seen_version: str | None = None
        self._halt_shown = False  # the status this controller last wrote shows the halt
        self._log = structlog.get_logger(__name__)

    def follow_status(self, status: UpdatePolicyStatus | None, version: str | None) -> None:
        """Take over a halt the status shows, or release ours when a resume cleared it."""
        if version is None or version == self._seen_version:
            return
        self._seen_version = version
        if status is None:
            return
        if status.halted and not self.halt.halted:
            reason = status.halt_reason
            at = status.halted_at
            cause = None
            if reason is not None and at is not None:
                cause = NodeFailure(reason.node, reason.check, reason.detail, at)
            self.halt = HaltDecision(halted=True, cause=cause, failures=status.failures)
            self.halted_at = at
            self._halt_shown = True
            self._log.info("rollout.halt_taken_over", failures=status.failures)
        elif not status.halted and self.halt.halted and self._halt_shown:
            self._log.info("rollout.resumed", failures=self.ledger.count)
            self.release()

    def shown(self, status: UpdatePolicyStatus, version: str | None) -> None:
        """This controller wrote `status`, now at `version`."""
        self._seen_version = version
        self._halt_shown = status.halted

    def release(self) -> None:
        """No halt, no failure counted (a resume, or no policy that halts)."""
        self.ledger = RolloutFailures(target_version=self.ledger.target_version)
        self.halt = NOT_HALTED
        self.halted_at = None
        self._halt_shown = False

    def record(self, target: str, failure: NodeFailure) -> None:
        """Count `failure` in the rollout to `target`."""
        before = self.ledger.count
        self.ledger = self.ledger.record(target, failure)
        if self.ledger.count > before:
            self._log.warning(
                "rollout.failure_counted",
                node=failure.node,
                check=failure.check,
                failures=self.ledger.count,
            )

    def decide(self, target: str | None, halt_after_failures: int | None, now: datetime) -> None:
        """The halt after this pass's failures: sticky once reached; none without a threshold
        (no policy object halts nothing)."""
        if halt_after_failures is None:
            if self.halt.halted or self.ledger.count:
                self.release()
            return
        if target is not None:
            self.ledger = self.ledger.for_version(target)
        if self.halt.halted:
            return
        decision = decide_halt(self.ledger, halt_after_failures)
        if decision.halted:
            self.halt = decision
            self.halted_at = now
            self._log.warning("rollout.halted", reason=decision.message)
        else:
            self.halt = decision

    def failed_nodes(self) -> frozenset[str]:
        """Nodes counted as failed in the current rollout."""
        return frozenset(failure.node for failure in self.ledger.failures)

"""Halt counting: the nodes that failed during one rollout, and whether the fleet must halt.

One rollout is the fleet's move to one target version. A node counts once per rollout, when it
fails the health gate or its update ends in ErrorReset; when the target version changes, a new
rollout starts and the count starts from zero. Once `haltAfterFailures` distinct nodes have
failed, the fleet halts, naming the failure that tipped it, until someone resumes (which
clears the ledger). Pure: the controller keeps the ledger and passes `now` in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from brupop.domain.policy.update_policy_status import HaltReason

ERROR_RESET_CHECK = "errorReset"
FAILURES_KEPT_MAX = 1000  # haltAfterFailures' own bound: past it the fleet has halted anyway


@dataclass(frozen=True)
class NodeFailure:
    """One node's failure: which check (a GateCheck name, or `errorReset`) and what was seen."""

    node: str
    check: str
    detail: str
    at: datetime

    def as_halt_reason(self) -> HaltReason:
        """The policy status' `haltReason` for this failure."""
        return HaltReason(node=self.node, check=self.check, detail=self.detail[:1024])


@dataclass(frozen=True)
class RolloutFailures:
    """The failures of the rollout to `target_version`, first failure first."""

    target_version: str | None = None
    failures: tuple[NodeFailure, ...] = ()

    @property
    def count(self) -> int:
        """Distinct nodes that failed in this rollout."""
        return len(self.failures)

    def for_version(self, target_version: str) -> RolloutFailures:
        """This ledger if it is about `target_version`, else an empty one for it."""
        if target_version == self.target_version:
            return self
        return RolloutFailures(target_version=target_version)

    def record(self, target_version: str, failure: NodeFailure) -> RolloutFailures:
        """The ledger with `failure` counted; a node already counted in this rollout is not
        counted again, and a different target version starts a new rollout."""
        current = self.for_version(target_version)
        if any(known.node == failure.node for known in current.failures):
            return current
        if current.count >= FAILURES_KEPT_MAX:
            return current
        return replace(current, failures=(*current.failures, failure))


@dataclass(frozen=True)
class HaltDecision:
    """Whether the fleet is halted, and by which failure."""

    halted: bool
    cause: NodeFailure | None = None
    failures: int = 0

    @property
    def message(self) -> str:
        """One sentence for the policy status."""
        if not self.halted or self.cause is None:
            return f"{self.failures} node(s) failed in this rollout"
        detail = f": {self.cause.detail}" if self.cause.detail else ""
        return (
            f"halted after {self.failures} failed node(s); node {self.cause.node} failed "
            f"{self.cause.check}{detail}"
        )


NOT_HALTED = HaltDecision(halted=False)


def decide_halt(ledger: RolloutFailures, halt_after_failures: int | None) -> HaltDecision:
    """Halted once the rollout counted `halt_after_failures` nodes (None: never, as with no
    policy object); the cause is the failure that reached the threshold."""
    if halt_after_failures is None or ledger.count < halt_after_failures:
        return HaltDecision(halted=False, failures=ledger.count)
    return HaltDecision(
        halted=True, cause=ledger.failures[halt_after_failures - 1], failures=ledger.count
    )

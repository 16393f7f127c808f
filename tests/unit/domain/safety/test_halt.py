"""Halt counting over one rollout (one target version)."""

from __future__ import annotations

from brupop.domain.safety.halt import (
    ERROR_RESET_CHECK,
    NodeFailure,
    RolloutFailures,
    decide_halt,
)
from tests.unit.domain.controller_shadows import NEW, NOW

NEWER = "1.21.0"


def _failure(node: str, check: str = "nodeReady") -> NodeFailure:
    return NodeFailure(node=node, check=check, detail=f"{node} broke", at=NOW)


def test_fleet_halts_when_the_threshold_of_failed_nodes_is_reached() -> None:
    ledger = RolloutFailures().record(NEW, _failure("a"))

    assert not decide_halt(ledger, 2).halted
    ledger = ledger.record(NEW, _failure("b", ERROR_RESET_CHECK))
    decision = decide_halt(ledger, 2)

    assert decision.halted
    assert decision.cause == _failure("b", ERROR_RESET_CHECK)
    assert decision.failures == 2
    assert "node b failed errorReset: b broke" in decision.message


def test_a_node_failing_twice_in_one_rollout_counts_once() -> None:
    ledger = RolloutFailures().record(NEW, _failure("a")).record(NEW, _failure("a", "httpProbe"))

    assert ledger.count == 1
    assert not decide_halt(ledger, 2).halted


def test_a_new_target_version_starts_a_new_rollout_with_no_failures() -> None:
    ledger = RolloutFailures().record(NEW, _failure("a"))

    moved_on = ledger.record(NEWER, _failure("b"))

    assert moved_on.target_version == NEWER
    assert [f.node for f in moved_on.failures] == ["b"]
    assert ledger.for_version(NEWER).count == 0
    assert ledger.for_version(NEW) is ledger


def test_the_cause_is_the_failure_that_reached_the_threshold_not_a_later_one() -> None:
    ledger = RolloutFailures()
    for node in ("a", "b", "c"):
        ledger = ledger.record(NEW, _failure(node))

    decision = decide_halt(ledger, 2)

    assert decision.cause is not None and decision.cause.node == "b"
    assert decision.failures == 3


def test_without_a_policy_object_failures_never_halt() -> None:
    ledger = RolloutFailures().record(NEW, _failure("a"))

    assert decide_halt(ledger, None).halted is False


def test_the_halt_reason_carries_node_check_and_detail() -> None:
    reason = _failure("a", "daemonSetPodsReady").as_halt_reason()

    assert (reason.node, reason.check, reason.detail) == ("a", "daemonSetPodsReady", "a broke")

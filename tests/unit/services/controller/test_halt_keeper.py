"""HaltKeeper: a halt is sticky until released, is taken over from the policy's status, and is
released when a status this controller did not write no longer shows the halt it wrote."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.domain.policy.update_policy_status import HaltReason, UpdatePolicyStatus
from brupop.domain.safety.halt import NodeFailure
from brupop.services.controller.safety.halt_keeper import HaltKeeper

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
FAILURE = NodeFailure("node-a", "nodeReady", "the node is not Ready", NOW)


def _halted() -> HaltKeeper:
    keeper = HaltKeeper()
    keeper.record("1.20.0", FAILURE)
    keeper.decide("1.20.0", 1, NOW)
    return keeper


def test_a_halt_outlasts_a_new_target_version() -> None:
    keeper = _halted()

    keeper.decide("1.21.0", 1, NOW)

    assert keeper.halt.halted and keeper.halt.cause == FAILURE
    assert keeper.ledger.count == 0, "the count starts again for the new rollout"


def test_a_status_without_the_halt_it_wrote_releases_it() -> None:
    keeper = _halted()
    written = UpdatePolicyStatus(halted_at=NOW, halt_reason=FAILURE.as_halt_reason(), failures=1)
    keeper.shown(written, "7")
    keeper.follow_status(written, "7")
    assert keeper.halt.halted

    keeper.follow_status(written.resumed(), "8")

    assert not keeper.halt.halted and keeper.ledger.count == 0


def test_a_status_read_before_the_halt_was_written_releases_nothing() -> None:
    keeper = _halted()

    keeper.follow_status(UpdatePolicyStatus(), "5")  # this controller's write has not landed

    assert keeper.halt.halted


def test_a_halt_found_in_the_status_is_taken_over() -> None:
    keeper = HaltKeeper()
    reason = HaltReason(node="node-b", check="httpProbe[0]", detail="answered 503")
    keeper.follow_status(UpdatePolicyStatus(halted_at=NOW, halt_reason=reason, failures=2), "3")

    keeper.decide("1.20.0", 1, NOW)

    assert keeper.halt.halted and keeper.halted_at == NOW
    assert keeper.halt.cause is not None and keeper.halt.cause.node == "node-b"


def test_no_threshold_releases_a_halt() -> None:
    keeper = _halted()

    keeper.decide("1.20.0", None, NOW)

    assert not keeper.halt.halted

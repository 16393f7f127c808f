"""Choosing which ready nodes start, through the start rules, in order."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.domain.reason import Reason
from brupop.domain.starting.start_holds import StartCandidate, StartHold, choose_starts

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _candidate(name: str, version: str = "1.2.0") -> StartCandidate:
    return StartCandidate(f"brs-{name}", name, version, None)


class _Pin:
    """Holds candidates offered anything but 1.2.0."""

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        if candidate.target_version != "1.2.0":
            return StartHold(Reason.PINNED, "pinned to 1.2.0")
        return None

    def started(self, candidate: StartCandidate) -> None:
        pass


class _OnePerPass:
    """Lets one candidate start, then holds the rest (as a full budget does)."""

    def __init__(self) -> None:
        self.count = 0

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        return StartHold(Reason.BUDGET_FULL, "group at 1/1") if self.count else None

    def started(self, candidate: StartCandidate) -> None:
        self.count += 1


def test_a_held_candidate_names_its_reason_and_the_next_one_starts_instead() -> None:
    candidates = [_candidate("a", "1.3.0"), _candidate("b"), _candidate("c")]
    choice = choose_starts(candidates, 1, (_Pin(),), NOW)
    assert [c.node_name for c in choice.starts] == ["b"]
    assert choice.holds == {"brs-a": StartHold(Reason.PINNED, "pinned to 1.2.0")}


def test_a_rule_counts_each_start_before_the_next_candidate_is_tried() -> None:
    candidates = [_candidate("a"), _candidate("b"), _candidate("c")]
    choice = choose_starts(candidates, 3, (_OnePerPass(),), NOW)
    assert [c.node_name for c in choice.starts] == ["a"]
    assert set(choice.holds) == {"brs-b", "brs-c"}


def test_candidates_past_the_last_free_slot_are_not_tried() -> None:
    candidates = [_candidate("a"), _candidate("b", "1.3.0")]
    choice = choose_starts(candidates, 1, (_Pin(),), NOW)
    assert [c.node_name for c in choice.starts] == ["a"]
    assert choice.holds == {}

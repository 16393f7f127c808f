"""Which Idle nodes the controller asks to prepare ahead, and which it stops asking."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.domain.policy.prestage import Prestage
from brupop.domain.starting.prestage_choice import (
    PrestageCandidate,
    PrestageWrite,
    may_stage_now,
    prestage_writes,
)

ON = Prestage(enabled=True, max_concurrent=2, start_before_seconds=3600)
NOW = datetime(2026, 12, 2, 3, 0, tzinfo=UTC)


def _node(
    name: str,
    *,
    target: str = "1.1.0",
    asked: str | None = None,
    staged: str | None = None,
    state: str | None = None,
) -> PrestageCandidate:
    return PrestageCandidate(name, "1.0.0", target, asked, staged, state)


def test_at_most_max_concurrent_nodes_are_asked_to_prepare_at_once() -> None:
    fleet = [_node(f"n{i}") for i in range(5)]
    writes = prestage_writes(ON, fleet, active=True, pin=None)
    assert writes == [PrestageWrite("n0", "1.1.0"), PrestageWrite("n1", "1.1.0")]


def test_a_node_still_preparing_takes_a_place_and_a_prepared_one_frees_it() -> None:
    fleet = [
        _node("n0", asked="1.1.0", staged="1.1.0", state="Staged"),
        _node("n1", asked="1.1.0"),
        _node("n2"),
        _node("n3"),
    ]
    assert prestage_writes(ON, fleet, active=True, pin=None) == [PrestageWrite("n2", "1.1.0")]


def test_a_disabled_section_asks_nothing_and_clears_what_was_asked() -> None:
    fleet = [_node("n0", asked="1.1.0"), _node("n1")]
    off = Prestage(enabled=False)
    assert prestage_writes(off, fleet, active=True, pin=None) == [PrestageWrite("n0", None)]
    assert prestage_writes(None, fleet, active=True, pin=None) == [PrestageWrite("n0", None)]


def test_a_paused_or_halted_fleet_stops_every_preparation_not_yet_in_its_turn() -> None:
    fleet = [_node("n0", asked="1.1.0"), _node("n1", asked="1.1.0", staged="1.1.0")]
    assert prestage_writes(ON, fleet, active=False, pin=None) == [
        PrestageWrite("n0", None),
        PrestageWrite("n1", None),
    ]


def test_a_pin_below_the_offered_version_stops_its_preparation() -> None:
    fleet = [_node("n0", target="1.2.0", asked="1.2.0"), _node("n1", target="1.2.0")]
    assert prestage_writes(ON, fleet, active=True, pin="1.1.0") == [PrestageWrite("n0", None)]


def test_a_newer_version_offered_replaces_the_one_asked() -> None:
    fleet = [_node("n0", target="1.2.0", asked="1.1.0", staged="1.1.0", state="Staged")]
    assert prestage_writes(ON, fleet, active=True, pin=None) == [PrestageWrite("n0", "1.2.0")]


def test_a_node_on_its_offered_version_or_already_holding_it_is_not_asked() -> None:
    fleet = [_node("n0", target="1.0.0"), _node("n1", staged="1.1.0", state="Staged")]
    assert prestage_writes(ON, fleet, active=True, pin=None) == []


def test_staging_may_begin_start_before_seconds_ahead_of_the_window() -> None:
    soon, later = NOW + timedelta(minutes=59), NOW + timedelta(minutes=61)
    assert may_stage_now(ON, NOW, window_open=False, opens_at=soon)
    assert not may_stage_now(ON, NOW, window_open=False, opens_at=later)
    assert may_stage_now(ON, NOW, window_open=True, opens_at=later)
    zero = Prestage(enabled=True, start_before_seconds=0)
    assert not may_stage_now(zero, NOW, window_open=False, opens_at=None)


def test_nodes_preparing_in_their_turn_share_the_places_of_the_downloads() -> None:
    fleet = [_node(f"n{i}") for i in range(4)]
    writes = prestage_writes(ON, fleet, active=True, pin=None, preparing_in_turn=1)
    assert writes == [PrestageWrite("n0", "1.1.0")]
    assert prestage_writes(ON, fleet, active=True, pin=None, preparing_in_turn=2) == []


def test_a_version_the_version_rules_hold_is_not_prepared_and_its_requests_are_cleared() -> None:
    fleet = [_node("n0", asked="1.1.0"), _node("n1"), _node("n2", target="1.2.0")]
    writes = prestage_writes(ON, fleet, active=True, pin=None, held={"1.1.0"})
    assert writes == [PrestageWrite("n0", None), PrestageWrite("n2", "1.2.0")]

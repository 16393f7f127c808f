"""`brupop status` lines about scheduling, from the `/status` `scheduling` entry: a line per
budget (bounded for many groups), the expected update time and its source, the clock's hold;
nothing for an older controller or a malformed part."""

from __future__ import annotations

from typing import Any

import pytest

from brupop.cli.status.scheduling_lines import (
    GROUPS_SHOWN,
    budget_lines,
    duration,
    expected_lines,
    hold_lines,
    scheduling_lines,
)

ZONE = "topology.kubernetes.io/zone"
NODEGROUP = "eks.amazonaws.com/nodegroup"


def _group(group: str, in_use: int, limit: int = 1, budget: str = ZONE) -> dict[str, Any]:
    return {"budget": budget, "group": group, "in_use": in_use, "limit": limit}


def test_a_budget_with_few_groups_lists_every_group() -> None:
    entries = [_group("zone-a", 1), _group("zone-b", 0), _group("zone-c", 1)]
    assert budget_lines(entries) == ["Budget zone: zone-a 1/1, zone-b 0/1, zone-c 1/1"]


def test_each_budget_has_its_own_line() -> None:
    entries = [_group("zone-a", 1), _group("ng-1", 1, 2, NODEGROUP)]
    assert budget_lines(entries) == ["Budget zone: zone-a 1/1", "Budget nodegroup: ng-1 1/2"]


def test_a_budget_with_many_groups_lists_the_full_ones_and_counts_the_rest() -> None:
    entries = [_group(f"ng-{i:02d}", 2 if i in (3, 7) else 0, 2, NODEGROUP) for i in range(40)]
    assert budget_lines(entries) == [
        "Budget nodegroup (40 groups, 2 full): ng-03 2/2, ng-07 2/2; 38 not full"
    ]


def test_more_full_groups_than_are_shown_are_counted() -> None:
    full = GROUPS_SHOWN + 3
    entries = [_group(f"g{i:02d}", 1 if i < full else 0) for i in range(30)]
    [line] = budget_lines(entries)
    assert line.startswith(f"Budget zone (30 groups, {full} full): g00 1/1, ")
    assert line.count("1/1") == GROUPS_SHOWN
    assert line.endswith(f"; 3 more full, {30 - full} not full")


def test_a_budget_with_many_groups_none_full_is_one_short_line() -> None:
    entries = [_group(f"g{i:02d}", 0) for i in range(GROUPS_SHOWN + 1)]
    assert budget_lines(entries) == [f"Budget zone ({GROUPS_SHOWN + 1} groups, none full)"]


def test_the_expected_time_names_the_updates_it_comes_from() -> None:
    entry = {"seconds": 1320, "from_updates": 20, "finish_by": True}
    assert expected_lines(entry) == ["Expected update time: 22m (p90 of the last 20 updates)"]


def test_before_any_history_the_expected_time_says_it_is_the_guess() -> None:
    entry = {"seconds": 900, "from_updates": 0, "finish_by": True}
    assert expected_lines(entry) == ["Expected update time: 15m (no history yet)"]


def test_one_recorded_update_is_the_expected_time() -> None:
    entry = {"seconds": 400, "from_updates": 1, "finish_by": True}
    assert expected_lines(entry) == ["Expected update time: 7m (the last update)"]


def test_without_finish_by_in_force_there_is_no_expected_time_line() -> None:
    assert expected_lines({"seconds": 900, "from_updates": 0, "finish_by": False}) == []


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(45, "45s"), (60, "1m"), (61, "2m"), (3599, "1h"), (3600, "1h"), (3900, "1h 5m")],
)
def test_durations_read_in_minutes_rounded_up(seconds: int, shown: str) -> None:
    assert duration(seconds) == shown


def test_a_hold_in_force_is_its_sentence() -> None:
    entry = {"reason": "blackout", "detail": "blackout until 2026-12-27T00:00:00Z: freeze"}
    assert hold_lines(entry) == ["Starts held: blackout until 2026-12-27T00:00:00Z: freeze"]


def test_the_lines_come_in_order_budgets_expected_time_hold() -> None:
    entry = {
        "budgets": [_group("zone-a", 1)],
        "expected_update": {"seconds": 900, "from_updates": 0, "finish_by": True},
        "hold": {"reason": "outside_window", "detail": "outside the update windows"},
    }
    assert scheduling_lines(entry) == [
        "Budget zone: zone-a 1/1",
        "Expected update time: 15m (no history yet)",
        "Starts held: outside the update windows",
    ]


def test_no_budget_and_no_hold_leave_only_the_expected_time() -> None:
    entry: dict[str, Any] = {
        "budgets": [],
        "expected_update": {"seconds": 900, "from_updates": 0, "finish_by": True},
        "hold": None,
    }
    assert scheduling_lines(entry) == ["Expected update time: 15m (no history yet)"]


def test_an_older_controller_without_the_entry_gives_no_line() -> None:
    assert scheduling_lines(None) == []


def test_malformed_parts_give_no_line_of_their_own() -> None:
    entry = {
        "budgets": [
            "zone-a",
            _group("zone-b", -1),
            _group("zone-c", True),
            {"group": "zone-d", "in_use": 0, "limit": 1},
            _group("zone-e", 0),
        ],
        "expected_update": {"seconds": "15m", "from_updates": 0},
        "hold": {"reason": "blackout"},
    }
    assert scheduling_lines(entry) == ["Budget zone: zone-e 0/1"]
    assert scheduling_lines({"budgets": {}, "expected_update": [], "hold": "x"}) == []

"""`brupop plan` with pre-staging: the turn of a node prepared ahead (`--staged-duration`), the
rows that say which nodes hold their version or are preparing it, and the picture's own span
for a preparation ahead."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from brupop.cli.plan.main import main
from brupop.cli.plan.plan_picture import plan_timeline
from brupop.cli.plan.plan_table import format_rows
from brupop.domain.planning.fleet_plan import FleetPlan, NodePlan, Outlook
from brupop.domain.reporting.rollout_timeline import Phase, Span

NOW = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)


def _plan() -> FleetPlan:
    def planned(
        node: str, start: int, finish: int, *, staged: bool = False, preparing: bool = False
    ) -> NodePlan:
        return NodePlan(
            node,
            Outlook.PLANNED,
            current_version="1.19.0",
            target_version="1.20.0",
            order=1,
            start=NOW + timedelta(seconds=start),
            finish=NOW + timedelta(seconds=finish),
            staged_ahead=staged,
            preparing_ahead=preparing,
        )

    nodes = (
        planned("node-01", 0, 100, staged=True),
        planned("node-02", 100, 700),
        planned("node-03", 700, 1300, preparing=True),
    )
    return FleetPlan(NOW, 600, 1, "name", "policy", nodes, staged_seconds=100)


def test_the_staged_duration_is_planned_with_and_said_in_the_heading_and_the_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fleet = ["--simulate", "--nodes", "2", "--duration", "600", "--staged-duration", "120"]
    assert main(fleet) == 0
    assert "each update 10m (as given), 2m when staged ahead;" in capsys.readouterr().out

    assert main([*fleet, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["staged_update_seconds"] == 120


def test_a_staged_duration_below_one_second_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--simulate", "--staged-duration", "0"]) != 0
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--staged-duration: 0 is outside" in line


def test_the_rows_say_which_nodes_are_staged_or_preparing_ahead() -> None:
    rows = format_rows(_plan()).splitlines()

    assert rows[1].endswith("1.20.0 staged ahead")
    assert "ahead" not in rows[2]
    assert rows[3].endswith("preparing 1.20.0 ahead")


def test_a_preparation_ahead_is_drawn_as_its_own_span_until_the_nodes_turn() -> None:
    first, second, third = plan_timeline(_plan()).rows

    assert third.spans[:2] == (
        Span(Phase.STAGING_AHEAD, 0.0, 700.0),
        Span(Phase.UPDATING, 700.0, 1300.0),
    )
    assert Phase.STAGING_AHEAD not in {span.phase for span in (*first.spans, *second.spans)}

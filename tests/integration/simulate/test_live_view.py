"""The live view of `brupop simulate` on a terminal of a fixed size: it fits the terminal (one
line counts the nodes left out, rather than rows cut to "..."), puts the nodes in flight first,
and carries the controller's REASON for each node."""

from __future__ import annotations

import io

from rich.console import Console

from brupop.domain.states import UpdateState
from brupop.simulation.fleet.observer import NodeView
from brupop.simulation.outcome.display import LiveView

IN_FLIGHT = ("node-17", "node-29", "node-33")


def _views(count: int) -> dict[str, NodeView]:
    views = {}
    for index in range(1, count + 1):
        name = f"node-{index:02d}"
        state = UpdateState.REBOOTED_INTO_UPDATE if name in IN_FLIGHT else UpdateState.IDLE
        views[name] = NodeView(
            name, spec_state=state, status_state=UpdateState.IDLE, current_version="1.19.0"
        )
    return views


def _drawn(rows: int, columns: int, nodes: int = 40) -> list[str]:
    console = Console(
        file=io.StringIO(), width=columns, height=rows, force_terminal=True, color_system=None
    )
    views = _views(nodes)
    reasons = {name: "concurrency_full: concurrency full (3/3 nodes updating)" for name in views}
    reasons |= {
        name: "updating: waiting for the agent to reach RebootedIntoUpdate" for name in IN_FLIGHT
    }
    view = LiveView(
        console, "1.20.0", nodes=lambda: views, agents=dict, active=lambda: 3, limit="3",
        reasons=lambda: reasons,
    )  # fmt: skip
    view.note("40 nodes on 1.19.0, 1.20.0 offered")
    console.print(view.render())
    output = console.file.getvalue()  # type: ignore[attr-defined]
    return str(output).rstrip("\n").splitlines()


def _rows(lines: list[str]) -> list[str]:
    return [line.split()[0] for line in lines if line.strip().startswith("node-")]


def test_on_a_24_row_terminal_the_view_fits_and_counts_the_nodes_left_out() -> None:
    lines = _drawn(rows=24, columns=120)

    assert len(lines) <= 24, "\n".join(lines)
    shown = _rows(lines)
    assert len(shown) >= 12
    assert f"... and {40 - len(shown)} more nodes ({40 - len(shown)} waiting)" in lines
    assert not [line for line in lines if line.strip() in ("...", "…")]


def test_the_nodes_in_flight_come_first() -> None:
    shown = _rows(_drawn(rows=24, columns=120))

    assert shown[:3] == list(IN_FLIGHT)
    assert shown[3:6] == ["node-01", "node-02", "node-03"]


def test_each_row_carries_the_controllers_reason() -> None:
    lines = _drawn(rows=24, columns=140)

    header = next(line for line in lines if "node " in line and "phase" in line)
    assert "REASON" in header
    first = next(line for line in lines if line.strip().startswith("node-17"))
    assert "updating: waiting for the agent" in first


def test_a_small_fleet_is_shown_whole() -> None:
    lines = _drawn(rows=40, columns=120, nodes=6)

    assert len(_rows(lines)) == 6
    assert not [line for line in lines if "more nodes" in line]


def test_a_node_that_has_just_updated_does_not_read_as_having_no_update() -> None:
    console = Console(
        file=io.StringIO(), width=140, height=20, force_terminal=True, color_system=None
    )
    views = {
        "node-01": NodeView(
            "node-01",
            spec_state=UpdateState.IDLE,
            status_state=UpdateState.IDLE,
            current_version="1.20.0",
        )
    }
    reasons = {"node-01": "no_update: no update offered"}
    view = LiveView(
        console, "1.20.0", nodes=lambda: views, agents=dict, active=lambda: 0, limit="1",
        reasons=lambda: reasons,
    )  # fmt: skip
    console.print(view.render())

    row = next(line for line in console.file.getvalue().splitlines() if "node-01" in line)  # type: ignore[attr-defined]
    assert "no_update" not in row
    assert "updated to 1.20.0" in row

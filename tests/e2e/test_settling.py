"""When a simulated fleet counts as settled (the run may end before every node updated)."""

from __future__ import annotations

from brupop.domain.states import UpdateState
from brupop.simulation.fleet.observer import NodeView
from brupop.simulation.fleet_wait import settled

IDLE = UpdateState.IDLE


def test_a_shadow_without_its_first_report_keeps_the_fleet_unsettled() -> None:
    views = {
        "a": NodeView("a", spec_state=IDLE, status_state=IDLE),
        "b": NodeView("b", spec_state=IDLE, status_state=None),
    }
    assert not settled(views)


def test_a_fleet_of_reported_idle_nodes_is_settled() -> None:
    views = {name: NodeView(name, spec_state=IDLE, status_state=IDLE) for name in "ab"}
    assert settled(views)


def test_a_node_outside_idle_keeps_the_fleet_unsettled() -> None:
    views = {
        "a": NodeView("a", spec_state=IDLE, status_state=IDLE),
        "b": NodeView("b", spec_state=UpdateState.REBOOTED_INTO_UPDATE, status_state=IDLE),
    }
    assert not settled(views)

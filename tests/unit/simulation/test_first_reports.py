"""simulate starts the controller once every agent has made its first report, so its first
pass sees the whole fleet; a node whose host answers late is waited for, up to a deadline after
which the controller starts and the run says which nodes are late."""

from __future__ import annotations

from brupop.domain.states import UpdateState
from brupop.simulation.fleet.observer import NodeView
from brupop.simulation.fleet_wait import FIRST_REPORTS_SECONDS, first_reports

REPORTED = NodeView("node-01", status_state=UpdateState.IDLE, target_version="1.20.0")


def _unreported(name: str) -> NodeView:
    return NodeView(name)


def test_a_node_whose_host_answers_15_s_late_is_waited_for() -> None:
    views = {"node-01": REPORTED, "node-02": _unreported("node-02")}

    reports = first_reports(views, waited=15.0)

    assert not reports.due
    assert reports.late == ("node-02",)


def test_a_fleet_that_has_all_reported_is_known_at_once() -> None:
    reports = first_reports({"node-01": REPORTED}, waited=0.0)

    assert reports.due and reports.late == ()


def test_past_the_deadline_the_controller_starts_and_the_note_names_the_late_nodes() -> None:
    views = {"node-01": REPORTED} | {f"node-{i:02d}": _unreported(f"node-{i:02d}") for i in (3, 2)}

    reports = first_reports(views, waited=FIRST_REPORTS_SECONDS)

    assert reports.due
    assert reports.note(FIRST_REPORTS_SECONDS) == (
        f"no first report from node-02, node-03 after {FIRST_REPORTS_SECONDS:.0f} s: "
        "the controller starts without waiting for them"
    )


def test_a_status_without_the_offered_update_is_not_a_first_report_yet() -> None:
    half = NodeView("node-02", status_state=UpdateState.IDLE, target_version=None)

    assert first_reports({"node-02": half}, waited=1.0).late == ("node-02",)


def test_the_note_names_at_most_ten_late_nodes() -> None:
    views = {f"node-{i:02d}": _unreported(f"node-{i:02d}") for i in range(12)}

    note = first_reports(views, waited=61.0).note(61.0)

    assert "node-09 and 2 more after 61 s" in note

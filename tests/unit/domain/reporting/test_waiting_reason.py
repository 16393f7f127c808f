"""The REASON column: every node says why it waits (or what it is doing)."""

from datetime import timedelta

import pytest

from brupop.domain.cluster.drain_progress import DrainProgress
from brupop.domain.reason import Explanation, Reason
from brupop.domain.reporting.waiting_reason import RolloutView, TimeoutRecord, report
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import Shadow
from brupop.domain.starting.start_holds import StartHold
from brupop.domain.states import UpdateState as S
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from tests.unit.domain.controller_shadows import NOW, OLD, ago, shadow

ALWAYS = MaintenanceWindow.starting("* * * * * * *", now=NOW)
MONDAY_MORNINGS = MaintenanceWindow.starting("* * 10-12 * * Mon *", now=NOW)
RULES = RolloutRules(ConcurrencyLimit(1))


def _view(**changes: object) -> RolloutView:
    fields: dict[str, object] = {
        "now": NOW,
        "rollout_rules": RULES,
        "window": ALWAYS,
        "window_open": True,
    }
    fields.update(changes)
    return RolloutView(**fields)  # type: ignore[arg-type]


def _only(node: Shadow, view: RolloutView, *others: Shadow) -> Explanation:
    rows = {row.node: row for row in report([node, *others], view)}
    return Explanation(rows[node.node_name].reason, rows[node.node_name].detail)


def test_no_update_offered() -> None:
    assert _only(shadow("n", target=OLD), _view()) == (Reason.NO_UPDATE, "no update offered")


def test_outside_a_window_says_when_the_next_one_opens() -> None:
    now = NOW + timedelta(hours=4)
    view = _view(now=now, window=MONDAY_MORNINGS, window_open=False)
    reason, detail = _only(shadow("n"), view)
    assert reason is Reason.OUTSIDE_WINDOW
    assert detail == (
        "outside window (next window opens at 2026-01-12T10:00:00+00:00); 1.20.0 offered"
    )


def test_a_one_shot_schedule_names_its_next_trigger() -> None:
    window = MaintenanceWindow.starting("0 0 10 * * Mon *", now=NOW)
    _, detail = _only(shadow("n"), _view(window=window, window_open=False))
    assert "next trigger at 2026-01-12T10:00:00+00:00" in detail


def test_concurrency_full_counts_the_nodes_updating() -> None:
    busy = shadow("busy", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.IDLE, stamped=ago(1))
    reason, detail = _only(shadow("n"), _view(), busy)
    assert reason is Reason.CONCURRENCY_FULL
    assert detail.startswith("concurrency full (1/1 nodes updating)")


def test_nodes_started_in_this_pass_fill_the_slots_of_the_others() -> None:
    view = _view(started=frozenset({"brs-a"}))
    rows = {r.node: r.reason for r in report([shadow("a"), shadow("b")], view)}
    assert rows == {"a": Reason.STARTING, "b": Reason.CONCURRENCY_FULL}


def test_backing_off_says_until_when() -> None:
    node = shadow("n", crashes=3, failed_at=ago(60))
    reason, detail = _only(node, _view())
    assert reason is Reason.BACKING_OFF
    assert detail == "backing off until 2026-01-05T10:08:00+00:00 (crash count 3)"


def test_backing_off_after_a_timeout_names_the_state_that_timed_out() -> None:
    node = shadow("n", crashes=1, failed_at=ago(60))
    record = TimeoutRecord(S.REBOOTED_INTO_UPDATE, 600, ago(60))
    _, detail = _only(node, _view(timeouts={"brs-n": record}))
    assert detail.endswith("; last failure: timed out in RebootedIntoUpdate")


def test_a_node_past_its_timeout_says_so() -> None:
    stuck = shadow(
        "n", spec=S.REBOOTED_INTO_UPDATE, state=S.STAGED_AND_PERFORMED_UPDATE, stamped=ago(700)
    )
    assert _only(stuck, _view()) == (
        Reason.TIMED_OUT,
        "timed out in RebootedIntoUpdate (limit 600 s)",
    )


def test_a_timed_out_node_waiting_for_its_agent_says_what_timed_out() -> None:
    stuck = shadow("n", spec=S.IDLE, state=S.STAGED_AND_PERFORMED_UPDATE, stamped=ago(5))
    record = TimeoutRecord(S.REBOOTED_INTO_UPDATE, 600, ago(5))
    reason, detail = _only(stuck, _view(timeouts={"brs-n": record}))
    assert reason is Reason.TIMED_OUT
    assert detail.startswith("timed out in RebootedIntoUpdate (limit 600 s) at 2026-01-05T09:59:55")


def test_a_drain_held_by_a_budget_names_the_budget() -> None:
    draining = shadow(
        "n", spec=S.REBOOTED_INTO_UPDATE, state=S.STAGED_AND_PERFORMED_UPDATE, stamped=ago(40)
    )
    drain = DrainProgress(remaining=("shop/web-1",), budgets=("shop/web-pdb",))
    reason, detail = _only(draining, _view(drains={"brs-n": drain}))
    assert reason is Reason.DRAIN_BLOCKED
    assert detail == "drain blocked by PodDisruptionBudget shop/web-pdb (pods shop/web-1)"


def test_a_crashed_node_waits_for_its_agent_to_recover() -> None:
    crashed = shadow("n", spec=S.IDLE, state=S.ERROR_RESET, stamped=ago(5), crashes=2)
    assert _only(crashed, _view()).reason is Reason.CRASHED


def test_an_updating_node_says_what_it_waits_for_and_until_when() -> None:
    node = shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.IDLE, stamped=ago(20))
    reason, detail = _only(node, _view())
    assert reason is Reason.UPDATING and not reason.is_waiting
    assert detail == (
        "waiting for the agent to reach StagedAndPerformedUpdate "
        "(times out at 2026-01-05T10:11:40+00:00)"
    )


def test_a_node_without_status_waits_for_its_agent() -> None:
    assert _only(shadow("n", state=None), _view()).reason is Reason.NO_STATUS


def test_a_ready_node_with_a_free_slot_starts_on_the_next_pass() -> None:
    assert _only(shadow("n"), _view()).reason is Reason.READY


@pytest.mark.parametrize(
    "node",
    [
        shadow("n"),
        shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.IDLE, stamped=ago(20)),
        shadow("n", spec=S.IDLE, state=S.ERROR_RESET, stamped=ago(5), crashes=2),
    ],
    ids=["ready", "updating", "crashed"],
)
def test_a_detail_does_not_repeat_its_reason_code(node: Shadow) -> None:
    reason, detail = _only(node, _view())

    assert not detail.startswith(f"{reason.value}:"), detail  # shown as "<reason>: <detail>"


@pytest.mark.parametrize("reason", list(Reason))
def test_only_starting_and_updating_are_not_waiting(reason: Reason) -> None:
    assert reason.is_waiting is (reason not in (Reason.STARTING, Reason.UPDATING))


def test_rows_carry_the_kubectl_columns_and_serialise_for_scripts() -> None:
    node = shadow("b", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.IDLE, stamped=ago(1), crashes=1)
    rows = report([node, shadow("a", target=OLD)], _view())
    assert [r.node for r in rows] == ["a", "b"]
    assert rows[1].as_json() == {
        "node": "b",
        "shadow": "brs-b",
        "state": "Idle",
        "version": "1.19.0",
        "target_state": "StagedAndPerformedUpdate",
        "target_version": "1.20.0",
        "crash_count": 1,
        "reason": "updating",
        "detail": rows[1].detail,
        "waiting": False,
    }


ZONE_HOLD = StartHold(Reason.BUDGET_FULL, "zone us-east-1a at 1/1")


def test_a_node_held_by_a_start_rule_names_the_hold_and_the_version_offered() -> None:
    view = _view(rollout_rules=RolloutRules(ConcurrencyLimit(3)), start_holds={"brs-n": ZONE_HOLD})
    assert _only(shadow("n"), view) == (
        Reason.BUDGET_FULL,
        "zone us-east-1a at 1/1; 1.20.0 offered",
    )


def test_a_start_hold_is_named_before_a_full_concurrency() -> None:
    busy = shadow("busy", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.IDLE, stamped=ago(1))
    view = _view(start_holds={"brs-n": ZONE_HOLD})
    assert _only(shadow("n"), view, busy).reason is Reason.BUDGET_FULL


def test_a_closed_window_is_named_before_a_start_hold() -> None:
    now = NOW + timedelta(hours=4)
    view = _view(
        now=now, window=MONDAY_MORNINGS, window_open=False, start_holds={"brs-n": ZONE_HOLD}
    )
    assert _only(shadow("n"), view).reason is Reason.OUTSIDE_WINDOW

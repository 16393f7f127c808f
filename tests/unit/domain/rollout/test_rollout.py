"""The rollout rules: next spec per node (reference 3.5) and the plan of one pass."""

from datetime import timedelta

import pytest

from brupop.domain.rollout.concurrency import ConcurrencyLimit, slots_held
from brupop.domain.rollout.rollout import (
    ChangeKind,
    RolloutRules,
    next_spec,
    plan_rollout,
    ready_to_start,
)
from brupop.domain.shadow import Shadow, ShadowSpec
from brupop.domain.states import StateTimeouts
from brupop.domain.states import UpdateState as S
from tests.unit.domain.controller_shadows import NEW, NOW, OLD, ago, shadow

LIMIT_3 = RolloutRules(ConcurrencyLimit(3))

# --- next_spec: the original's rules ---------------------------------------------------------


def test_no_status_gives_the_default_spec() -> None:
    node = shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, state=None, stamped=ago(5))
    assert next_spec(node, NOW) == ShadowSpec()


def test_an_idle_node_offered_a_version_is_asked_to_stage_that_version_now() -> None:
    spec = next_spec(shadow("n"), NOW)
    assert spec == ShadowSpec(
        state=S.STAGED_AND_PERFORMED_UPDATE, state_transition_timestamp=NOW, version=NEW
    )


def test_an_idle_node_without_an_update_gets_its_spec_cleared() -> None:
    node = shadow("n", target=OLD, version=NEW, stamped=ago(60))
    assert next_spec(node, NOW) == ShadowSpec()


def test_versions_compare_by_semver_not_by_text() -> None:
    node = shadow("n", current="1.20.0", target="1.20.0+build.7")
    assert next_spec(node, NOW) == ShadowSpec()


@pytest.mark.parametrize(
    ("reached", "following"),
    [
        (S.STAGED_AND_PERFORMED_UPDATE, S.REBOOTED_INTO_UPDATE),
        (S.REBOOTED_INTO_UPDATE, S.MONITORING_UPDATE),
        (S.MONITORING_UPDATE, S.IDLE),
    ],
)
def test_a_node_that_reached_its_desired_state_moves_on_keeping_the_version(
    reached: S, following: S
) -> None:
    node = shadow("n", spec=reached, state=reached, stamped=ago(30))
    assert next_spec(node, NOW) == ShadowSpec(
        state=following, state_transition_timestamp=NOW, version=NEW
    )


def test_a_node_still_on_its_way_keeps_its_spec() -> None:
    node = shadow("n", spec=S.REBOOTED_INTO_UPDATE, state=S.STAGED_AND_PERFORMED_UPDATE)
    assert next_spec(node, NOW) == node.spec


def test_a_crashed_node_is_sent_back_to_idle_once() -> None:
    crashed = shadow("n", spec=S.REBOOTED_INTO_UPDATE, state=S.ERROR_RESET, stamped=ago(30))
    recovering = next_spec(crashed, NOW)
    assert recovering == ShadowSpec(state=S.IDLE, state_transition_timestamp=NOW, version=NEW)
    answered = crashed.model_copy(update={"spec": recovering})
    assert next_spec(answered, NOW + timedelta(seconds=2)) == recovering, "not re-stamped"


def test_a_node_backing_off_keeps_its_idle_spec_until_the_delay_has_passed() -> None:
    node = shadow("n", crashes=2, failed_at=ago(4 * 60 + 59))
    assert next_spec(node, NOW) == node.spec
    assert next_spec(node, NOW + timedelta(seconds=1)).state is S.STAGED_AND_PERFORMED_UPDATE


# --- plan_rollout: one pass ------------------------------------------------------------------


def _fleet(count: int) -> list[Shadow]:
    return [shadow(f"node-{i:02d}") for i in range(count)]


def test_a_ten_node_rollout_with_limit_three_starts_three_nodes_in_the_first_pass() -> None:
    plan = plan_rollout(_fleet(10), NOW, LIMIT_3, may_start=True)
    assert plan.started() == ("brs-node-00", "brs-node-01", "brs-node-02")
    assert all(c.spec.state is S.STAGED_AND_PERFORMED_UPDATE for c in plan.changes)


def test_only_the_free_slots_are_filled() -> None:
    fleet = _fleet(10)
    fleet[5] = shadow("node-05", spec=S.REBOOTED_INTO_UPDATE, state=S.STAGED_AND_PERFORMED_UPDATE)
    plan = plan_rollout(fleet, NOW, LIMIT_3, may_start=True)
    assert plan.slots_held == 1
    assert plan.started() == ("brs-node-00", "brs-node-01")


def test_a_restarted_controller_fills_slots_beside_nodes_already_updating() -> None:
    fleet = _fleet(4)
    fleet[0] = shadow("node-00", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.IDLE, stamped=ago(1))
    plan = plan_rollout(fleet, NOW, LIMIT_3, may_start=True)
    assert plan.started() == ("brs-node-01", "brs-node-02")


def test_no_slot_is_free_when_the_limit_is_already_exceeded() -> None:
    fleet = [shadow(f"busy-{i}", spec=S.STAGED_AND_PERFORMED_UPDATE) for i in range(5)] + _fleet(3)
    assert plan_rollout(fleet, NOW, LIMIT_3, may_start=True).started() == ()


def test_unlimited_starts_every_ready_node() -> None:
    plan = plan_rollout(_fleet(25), NOW, RolloutRules(ConcurrencyLimit(None)), may_start=True)
    assert len(plan.started()) == 25


def test_outside_the_window_nothing_starts_but_updating_nodes_move_on() -> None:
    fleet = [*_fleet(3), shadow("busy", spec=S.REBOOTED_INTO_UPDATE, state=S.REBOOTED_INTO_UPDATE)]
    plan = plan_rollout(fleet, NOW, LIMIT_3, may_start=False)
    assert plan.started() == ()
    assert [(c.shadow.node_name, c.kind, c.spec.state) for c in plan.changes] == [
        ("busy", ChangeKind.ADVANCE, S.MONITORING_UPDATE)
    ]
    assert len(plan.ready) == 3


def test_the_controllers_own_node_starts_last() -> None:
    rules = RolloutRules(ConcurrencyLimit(1), controller_node="node-00")
    assert plan_rollout(_fleet(3), NOW, rules, may_start=True).started() == ("brs-node-01",)
    alone = plan_rollout(_fleet(1), NOW, rules, may_start=True)
    assert alone.started() == ("brs-node-00",)


def test_nodes_with_fewer_crashes_go_first() -> None:
    fleet = [
        shadow("a", crashes=3, failed_at=ago(86400)),
        shadow("b", crashes=1, failed_at=ago(86400)),
        shadow("c"),
    ]
    rules = RolloutRules(ConcurrencyLimit(2))
    assert plan_rollout(fleet, NOW, rules, may_start=True).started() == ("brs-c", "brs-b")


def test_nodes_backing_off_are_not_ready() -> None:
    fleet = [shadow("a", crashes=1, failed_at=ago(60)), shadow("b")]
    assert [s.node_name for s in ready_to_start(fleet, NOW, LIMIT_3)] == ["b"]


def test_a_timed_out_node_is_sent_back_to_idle_and_keeps_its_slot() -> None:
    stuck = shadow(
        "stuck", spec=S.REBOOTED_INTO_UPDATE, state=S.STAGED_AND_PERFORMED_UPDATE, stamped=ago(601)
    )
    rules = RolloutRules(ConcurrencyLimit(1))
    plan = plan_rollout([stuck, shadow("next")], NOW, rules, may_start=True)
    (change,) = plan.changes
    assert change.kind is ChangeKind.TIMEOUT
    assert change.spec == ShadowSpec(state=S.IDLE, state_transition_timestamp=NOW, version=NEW)
    assert plan.started() == (), "the node is outside Idle until its agent brings it back"


def test_a_node_whose_agent_never_returns_to_idle_times_out_again_later() -> None:
    dead = shadow("dead", spec=S.IDLE, state=S.REBOOTED_INTO_UPDATE, stamped=ago(121))
    (change,) = plan_rollout([dead], NOW, LIMIT_3, may_start=True).changes
    assert change.kind is ChangeKind.TIMEOUT


def test_custom_timeouts_apply() -> None:
    staging = shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.IDLE, stamped=ago(11))
    rules = RolloutRules(ConcurrencyLimit(1), StateTimeouts(staged_and_performed_update=10))
    assert plan_rollout([staging], NOW, rules, may_start=False).changes[0].kind is (
        ChangeKind.TIMEOUT
    )


def test_crashes_and_stale_specs_are_answered_whatever_the_window() -> None:
    fleet = [
        shadow("crashed", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.ERROR_RESET, stamped=ago(5)),
        shadow("done", target=OLD, version=OLD, stamped=ago(5)),
        shadow("unreported", spec=S.STAGED_AND_PERFORMED_UPDATE, state=None),
    ]
    kinds = {
        c.shadow.node_name: c.kind
        for c in plan_rollout(fleet, NOW, LIMIT_3, may_start=False).changes
    }
    assert kinds == {
        "crashed": ChangeKind.RECOVER,
        "done": ChangeKind.RESET,
        "unreported": ChangeKind.RESET,
    }


def test_after_every_plan_no_more_nodes_hold_slots_than_the_limit() -> None:
    fleet = [*_fleet(7), shadow("busy", spec=S.MONITORING_UPDATE, state=S.MONITORING_UPDATE)]
    plan = plan_rollout(fleet, NOW, LIMIT_3, may_start=True)
    written = {c.shadow.name: c.spec for c in plan.changes}
    after = [s.model_copy(update={"spec": written.get(s.name, s.spec)}) for s in fleet]
    assert slots_held(after) == 3

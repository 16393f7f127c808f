"""The plan steps the controller's rules forward: order, slots, holds and their ends."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from brupop.domain.planning.fleet_plan import FinishBy, Outlook
from brupop.domain.policy.update_policy_status import HaltReason, UpdatePolicyStatus, VersionSeen
from brupop.domain.reason import Reason
from brupop.domain.shadow import Shadow, ShadowSpec
from brupop.domain.states import UpdateState
from tests.unit.domain.planning.planned_fleet import (
    NOW,
    ZONE,
    budget,
    line,
    node,
    offset,
    plan_of,
    pods,
    policy,
    shadow,
    tainted,
)


def test_cheapest_first_starts_the_emptiest_nodes_and_each_finish_frees_a_slot() -> None:
    nodes = [node(f"n{i}") for i in range(1, 5)]
    loaded = pods("n1", 3) + pods("n2", 0) + pods("n3", 5) + pods("n4", 1)

    plan = plan_of(nodes, pods_=loaded, limit=2, seconds=600)

    assert plan.start_order() == ["n2", "n4", "n1", "n3"]
    assert [offset(line(plan, n).start) for n in plan.start_order()] == [0, 0, 600, 600]
    assert offset(plan.finish) == 1200
    waited = line(plan, "n1").holds
    assert [(h.reason, offset(h.until)) for h in waited] == [(Reason.CONCURRENCY_FULL, 600)]


def test_order_name_keeps_the_book_order_whatever_the_pods() -> None:
    nodes = [node("a"), node("b"), node("c")]

    by_name = policy({"order": "name", "capacityCheck": False})

    plan = plan_of(nodes, pods_=pods("a", 9), in_force=by_name)

    assert plan.start_order() == ["a", "b", "c"]


def test_a_zone_budget_holds_a_node_until_its_zone_mate_finishes() -> None:
    nodes = [node("a1", **{ZONE: "a"}), node("a2", **{ZONE: "a"}), node("b1", **{ZONE: "b"})]
    zone_budget = policy({"budgets": [{"groupBy": ZONE, "maxConcurrent": 1}], "order": "name"})

    plan = plan_of(nodes, in_force=zone_budget, limit=3, seconds=300)

    assert plan.start_order() == ["a1", "b1", "a2"]
    hold = line(plan, "a2").holds[0]
    assert hold.reason is Reason.BUDGET_FULL and "zone a at 1/1" in hold.detail
    assert offset(hold.until) == 300 == offset(line(plan, "a2").start)


def test_the_policy_max_concurrent_replaces_the_environment_limit() -> None:
    nodes = [node(f"n{i}") for i in range(4)]

    plan = plan_of(nodes, in_force=policy({"maxConcurrent": "50%"}), limit=1)

    assert plan.limit == 2
    assert [offset(line(plan, n).start) for n in plan.start_order()] == [0, 0, 600, 600]


def test_a_window_holds_every_start_until_it_opens() -> None:
    nodes = [node("a")]
    night = policy({"windows": [{"cron": "* * 22-23 * * * *", "timeZone": "UTC"}]})

    plan = plan_of(nodes, in_force=night)

    hold = line(plan, "a").holds[0]
    assert hold.reason is Reason.OUTSIDE_WINDOW
    assert offset(hold.until) == offset(line(plan, "a").start) == 12 * 3600


def test_a_blackout_holds_starts_until_its_end() -> None:
    end = NOW + timedelta(hours=2)
    frozen = policy(
        {"blackouts": [{"start": "2026-05-01T00:00:00Z", "end": end.isoformat(), "reason": "x"}]}
    )

    plan = plan_of([node("a")], in_force=frozen)

    hold = line(plan, "a").holds[0]
    assert (hold.reason, hold.until, line(plan, "a").start) == (Reason.BLACKOUT, end, end)


def test_finish_by_is_missed_by_an_update_that_outlasts_its_window_and_met_when_asked_for() -> None:
    window = [{"cron": "* * 10 * * * *", "timeZone": "UTC"}]  # 10:00-10:59, now is 10:00
    nodes = [node("a"), node("b")]

    loose = plan_of(
        nodes,
        in_force=policy({"windows": window, "finishBy": False, "order": "name"}),
        seconds=2400,
    )
    strict = plan_of(
        nodes, in_force=policy({"windows": window, "finishBy": True, "order": "name"}), seconds=2400
    )

    assert line(loose, "a").finish_by == FinishBy(True)
    missed = line(loose, "b").finish_by
    assert missed is not None and not missed.met and "window closes" in missed.detail
    assert offset(line(strict, "b").start) == 24 * 3600  # the next day's window, as a whole
    assert line(strict, "b").finish_by == FinishBy(True)
    assert line(strict, "b").holds[-1].reason is Reason.FINISH_BY


def test_a_pin_below_the_offered_version_holds_the_node_for_good() -> None:
    plan = plan_of([node("a")], in_force=policy({"version": {"pin": "1.0.5"}}))

    only = line(plan, "a")
    assert only.outlook is Outlook.NEVER and only.order is None
    assert [(h.reason, h.until) for h in only.holds] == [(Reason.PINNED, None)]
    assert plan.notes == ("1 of 1 nodes never starts within the plan: see their holds",)


def test_a_young_release_waits_for_its_release_age_from_when_it_was_first_offered() -> None:
    seen = UpdatePolicyStatus(versions_first_seen=(VersionSeen(version="1.1.0", at=NOW),))
    aged = policy({"version": {"minReleaseAgeHours": 24}})

    plan = plan_of([node("a")], in_force=aged, status=seen)

    hold = line(plan, "a").holds[0]
    assert hold.reason is Reason.RELEASE_TOO_NEW
    assert offset(hold.until) == offset(line(plan, "a").start) == 24 * 3600


def test_a_version_one_node_of_three_reports_holds_that_node_for_good_in_the_plan() -> None:
    planted = UpdatePolicyStatus(versions_first_seen=(VersionSeen(version="1.2.0", at=NOW),))
    shadows = [shadow("a", target="1.2.0"), shadow("b"), shadow("c")]
    aged = policy({"version": {"minReleaseAgeHours": 24}})

    plan = plan_of(
        [node("a"), node("b"), node("c")], shadows=shadows, in_force=aged, status=planted
    )

    early = line(plan, "a")
    assert early.outlook is Outlook.NEVER
    assert [(h.reason, h.detail, h.until) for h in early.holds] == [
        (
            Reason.RELEASE_TOO_NEW,
            "1.2.0 offered by 1 of 2 nodes needed to start its release age",
            None,
        )
    ]
    assert offset(line(plan, "b").start) == 24 * 3600


def test_a_do_not_disrupt_pod_and_an_autoscaler_removal_hold_their_nodes_for_good() -> None:
    guarded = replace(pods("a", 1)[0], annotations={"karpenter.sh/do-not-disrupt": "true"})
    nodes = [node("a"), tainted("b", "ToBeDeletedByClusterAutoscaler"), node("c")]

    plan = plan_of(nodes, pods_=(guarded,), limit=3)

    assert plan.start_order() == ["c"]
    assert line(plan, "a").holds[-1].reason is Reason.BLOCKING_POD
    assert "do-not-disrupt" in line(plan, "a").holds[-1].detail
    assert line(plan, "b").holds[-1].reason is Reason.AUTOSCALER


def test_a_do_not_disrupt_pod_with_a_duration_holds_its_node_until_its_end_then_it_starts() -> None:
    guarded = replace(
        pods("a", 1)[0],
        annotations={"karpenter.sh/do-not-disrupt": "4h"},
        created_at=NOW - timedelta(hours=1),
    )

    plan = plan_of([node("a"), node("b")], pods_=(guarded,), limit=2)

    hold = line(plan, "a").holds[0]
    assert hold.reason is Reason.BLOCKING_POD
    assert offset(hold.until) == 3 * 3600
    assert offset(line(plan, "a").start) == 3 * 3600  # starts once the protection ends
    assert offset(line(plan, "b").start) == 0


def test_a_budget_that_allows_no_disruption_is_named_as_the_blocker_of_that_drain() -> None:
    nodes = [node("a"), node("b")]
    guarded = pods("a", 1, app="db") + pods("b", 1, app="web")

    plan = plan_of(
        nodes, pods_=guarded, budgets=(budget("db", 1, app="db"), budget("web", 0, app="web"))
    )

    assert line(plan, "a").drain_blockers == (
        "PDB default/db allows no disruption of pod default/a-p0",
    )
    assert line(plan, "b").drain_blockers == ()


def test_a_halted_fleet_starts_nothing_until_resumed() -> None:
    halted = UpdatePolicyStatus(halt_reason=HaltReason(node="x", check="nodeReady"))

    plan = plan_of([node("a")], in_force=policy({"haltAfterFailures": 1}), status=halted)

    assert plan.start_order() == []
    assert line(plan, "a").holds[0].reason is Reason.HALTED
    assert plan.notes[0].startswith("no node starts: halted: x failed nodeReady")


def test_a_paused_node_never_starts_and_the_others_go_on() -> None:
    nodes = [node("a", **{"brupop.bottlerocket.aws/paused": "true"}), node("b")]

    plan = plan_of(nodes)

    assert plan.start_order() == ["b"]
    assert line(plan, "a").holds[0].reason is Reason.PAUSED


def test_a_node_in_flight_holds_its_slot_until_its_expected_finish() -> None:
    started = ShadowSpec(
        state=UpdateState.REBOOTED_INTO_UPDATE,
        state_transition_timestamp=NOW - timedelta(seconds=200),
        version="1.1.0",
    )
    shadows = [
        shadow("a", spec=started, state=UpdateState.STAGED_AND_PERFORMED_UPDATE),
        shadow("b"),
    ]

    plan = plan_of([node("a"), node("b")], shadows=shadows, seconds=600)

    assert line(plan, "a").outlook is Outlook.IN_FLIGHT and offset(line(plan, "a").finish) == 400
    assert offset(line(plan, "b").start) == 400
    assert [n.node for n in plan.nodes] == ["a", "b"]


def test_only_the_canaries_start_until_they_have_soaked() -> None:
    nodes = [node(f"n{i}") for i in range(1, 4)]
    canary = policy({"canary": {"count": 1, "soakSeconds": 120}, "order": "name"})

    plan = plan_of(nodes, in_force=canary, limit=3, seconds=300)

    assert plan.start_order() == ["n1", "n2", "n3"]
    assert [offset(line(plan, n).start) for n in plan.start_order()] == [0, 420, 420]
    assert line(plan, "n2").holds[0].reason is Reason.CANARY_SOAK


def test_up_to_date_and_unreported_nodes_are_listed_after_the_planned_ones() -> None:
    shadows = [shadow("a", current="1.1.0"), shadow("b")]

    plan = plan_of([node("a"), node("b"), node("c")], shadows=shadows)

    assert [(n.node, n.outlook) for n in plan.nodes] == [
        ("b", Outlook.PLANNED),
        ("c", Outlook.NO_STATUS),
        ("a", Outlook.UP_TO_DATE),
    ]


def test_the_capacity_check_holds_a_node_whose_pods_fit_on_no_other_node() -> None:
    plan = plan_of([node("a"), node("b")], pods_=pods("a", 2), in_force=policy({"order": "name"}))

    assert plan.start_order() == ["b"]
    assert line(plan, "a").holds[-1].reason is Reason.NO_ROOM


def test_a_shadow_failed_at_the_end_of_the_calendar_never_starts_and_the_others_are_planned() -> (
    None
):
    hostile = shadow("a")
    assert hostile.status is not None
    failed = hostile.status.model_copy(
        update={
            "crash_count": 1,
            "state_transition_failure_timestamp": datetime.max.replace(tzinfo=UTC),
        }
    )
    nodes = [node("a"), node("b"), node("c")]

    plan = plan_of(
        nodes, shadows=[hostile.model_copy(update={"status": failed}), shadow("b"), shadow("c")]
    )

    assert plan.start_order() == ["b", "c"]
    assert line(plan, "a").outlook is Outlook.NEVER
    assert any(n.startswith("brs-a is quarantined and never starts: status.") for n in plan.notes)


def _staged_ahead(name: str) -> Shadow:
    made = shadow(name)
    assert made.status is not None
    held = {"staged_version": "1.1.0", "staged_state": "Staged"}
    return made.model_copy(update={"status": made.status.model_copy(update=held)})


def test_a_node_prepared_ahead_takes_only_the_in_window_part_of_an_update() -> None:
    shadows = [_staged_ahead("a"), shadow("b"), _staged_ahead("c")]
    nodes = [node("a"), node("b"), node("c")]

    plan = plan_of(nodes, shadows=shadows, seconds=600, staged_seconds=100)

    assert [offset(line(plan, n).start) for n in ("a", "b", "c")] == [0, 100, 700]
    assert [offset(line(plan, n).finish) for n in ("a", "b", "c")] == [100, 700, 800]
    assert [line(plan, n).staged_ahead for n in ("a", "b", "c")] == [True, False, True]
    assert plan.as_json()["staged_update_seconds"] == 100


def test_without_an_in_window_duration_a_node_prepared_ahead_takes_a_whole_update() -> None:
    plan = plan_of([node("a")], shadows=[_staged_ahead("a")], seconds=600)

    assert offset(line(plan, "a").finish) == 600


def test_a_node_holding_another_version_or_one_activated_takes_a_whole_update() -> None:
    other = _staged_ahead("a")
    assert other.status is not None
    older = other.model_copy(
        update={"status": other.status.model_copy(update={"staged_version": "1.0.5"})}
    )
    ready = _staged_ahead("b")
    assert ready.status is not None
    activated = ready.model_copy(
        update={"status": ready.status.model_copy(update={"staged_state": "Ready"})}
    )

    plan = plan_of(
        [node("a"), node("b")], shadows=[older, activated], seconds=600, limit=2, staged_seconds=100
    )

    assert [offset(line(plan, n).finish) for n in ("a", "b")] == [600, 600]


def test_a_node_preparing_ahead_now_says_so_and_takes_a_whole_update() -> None:
    asked = shadow("a").model_copy(update={"spec": ShadowSpec(prestage_version="1.1.0")})

    plan = plan_of([node("a"), node("b")], shadows=[asked, shadow("b")], staged_seconds=100)

    assert (line(plan, "a").preparing_ahead, line(plan, "b").preparing_ahead) == (True, False)
    assert offset(line(plan, "a").finish) == 600
    assert plan.as_json()["nodes"][0]["preparing_ahead"] is True

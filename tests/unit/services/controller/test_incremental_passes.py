"""The controller decides from its mirror, per change: a pass with nothing new decides no
shadow again, and time alone (a backoff ending, a deadline passing) still changes decisions."""

from __future__ import annotations

from collections import Counter

from brupop.domain.shadow import ShadowStatus, shadow_name
from brupop.domain.states import StateTimeouts
from brupop.domain.states import UpdateState as S
from tests.unit.services.controller.fleet import NEW, OLD, Fleet, RecordingMetrics


def test_a_pass_with_nothing_new_decides_no_shadow_and_explains_only_nodes_in_a_slot() -> None:
    fleet = Fleet(30)
    controller = fleet.controller(3)
    controller.tick()  # starts three
    fleet.clock.advance(1)
    controller.tick()  # sees its own writes come back
    decided, explained = controller.work_done()

    fleet.clock.advance(1)
    controller.tick()

    assert controller.work_done() == (decided, explained + 3)


def test_a_changed_shadow_is_the_only_one_decided_again() -> None:
    fleet = Fleet(30)
    controller = fleet.controller(3)
    controller.tick()
    controller.tick()
    decided, _ = controller.work_done()

    fleet.step("node-00")
    controller.tick()

    assert controller.work_done()[0] == decided + 2, "the agent's report and our answer to it"


def test_a_backoff_that_ends_with_no_event_starts_the_node() -> None:
    fleet = Fleet(1)
    failed = ShadowStatus(
        current_version=OLD,
        target_version=NEW,
        current_state=S.IDLE,
        crash_count=1,
        state_transition_failure_timestamp=fleet.clock.now(),
    )
    fleet.cluster.shadows.update_status(shadow_name("node-00"), failed)
    controller = fleet.controller(1)
    controller.tick()
    assert fleet.specs() == {"node-00": S.IDLE}

    fleet.clock.advance(3 * 60)  # 2^1 + 1 minutes: nothing in the cluster changes meanwhile
    controller.tick()

    assert fleet.specs() == {"node-00": S.STAGED_AND_PERFORMED_UPDATE}


def test_a_timeout_with_no_event_is_enforced() -> None:
    fleet = Fleet(1)
    controller = fleet.controller(1, timeouts=StateTimeouts(staged_and_performed_update=30))
    controller.tick()
    assert fleet.specs() == {"node-00": S.STAGED_AND_PERFORMED_UPDATE}

    fleet.clock.advance(31)  # the agent never answers
    controller.tick()

    assert fleet.specs() == {"node-00": S.IDLE}
    assert fleet.shadow("node-00").status.crash_count == 1  # type: ignore[union-attr]


def test_a_replica_that_becomes_leader_lists_the_shadows_before_deciding() -> None:
    fleet = Fleet(3)
    first, second = fleet.controller(1), fleet.controller(1)
    first.tick()
    second.tick()
    relists = second.fleet.shadow_informer.relists

    first.elector.release()
    fleet.clock.advance(20)  # the follower's next look at the Lease
    second.tick()

    assert second.elector.is_leader()
    assert second.fleet.shadow_informer.relists == relists + 1


def test_the_waiting_counts_kept_per_change_match_the_rows_built_on_demand() -> None:
    fleet = Fleet(12)
    metrics = RecordingMetrics()
    controller = fleet.controller(2, metrics=metrics)
    for round_ in range(40):
        controller.tick()
        rows = Counter(r.reason.value for r in controller.reports() if r.reason.is_waiting)
        assert {k: v for k, v in metrics.waiting.items() if v} == dict(rows)
        if round_ % 3 == 0:
            fleet.fail(fleet.names[round_ % 12])
        fleet.step_all()
        fleet.clock.advance(30)


def test_a_leader_that_lost_the_lease_between_two_ticks_lists_again_when_it_leads_again() -> None:
    fleet = Fleet(3)
    first, second = fleet.controller(1), fleet.controller(1)
    first.tick()
    relists = first.fleet.shadow_informer.relists
    first.elector.release()  # as if it had stalled past its lease
    fleet.clock.advance(6)
    second.tick()  # another replica leads for a while, writes, and stops
    second.elector.release()
    fleet.clock.advance(20)  # the first one's next look at the Lease

    first.tick()

    assert first.elector.is_leader()
    assert first.fleet.shadow_informer.relists == relists + 1


def test_a_follower_forgets_its_own_writes_while_a_leader_waits_for_them_to_show() -> None:
    fleet = Fleet(3)
    leading, following = fleet.container(3), fleet.container(3)
    leader, follower = leading.service(), following.service()
    leader.tick()
    follower.tick()
    shown = fleet.shadow("node-02")  # a write each replica remembers, not yet in its mirror
    for container in (leading, following):
        container.journal().remember(shown.name, shown.resource_version)

    leader.tick()
    follower.tick()

    assert leading.journal().names() == [shown.name], "the leader waits for its write to show"
    assert following.journal().names() == [], "a follower's writes are history"

"""The controller service against the in-memory cluster, one tick at a time on a fake clock."""

from __future__ import annotations

import threading
import time
from typing import Any, cast

from structlog.testing import capture_logs

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import (
    CORDONED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUDED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUSION_LABEL,
    LB_EXCLUSION_VALUE,
    EventType,
    Listing,
    OwnerReference,
)
from brupop.domain.reason import Reason
from brupop.domain.shadow import OPT_IN_LABEL, Shadow, ShadowSpec, shadow_name
from brupop.domain.states import StateTimeouts
from brupop.domain.states import UpdateState as S
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.monitoring.rollout_metrics import UpdatePhase
from brupop.services.controller.service import ControllerService
from tests.support.polling import wait_until
from tests.unit.services.controller.fleet import NEW, OLD, Fleet, RecordingMetrics


def test_a_ten_node_rollout_with_limit_three_fills_three_slots_in_the_first_pass() -> None:
    fleet = Fleet(10)
    fleet.controller(3).tick()
    started = [n for n, state in fleet.specs().items() if state is S.STAGED_AND_PERFORMED_UPDATE]
    assert started == ["node-00", "node-01", "node-02"]


def test_the_whole_fleet_updates_without_ever_exceeding_the_limit() -> None:
    fleet = Fleet(10)
    controller = fleet.controller(3)
    for _ in range(200):
        controller.tick()
        assert fleet.outside_idle() <= 3
        if fleet.all_updated():
            break
        fleet.step_all()
        fleet.clock.advance(1)
    assert fleet.all_updated()
    assert all(s.spec == ShadowSpec() for s in fleet.shadows()), "finished specs are cleared"


def test_outside_the_window_no_node_starts_but_started_ones_finish() -> None:
    fleet = Fleet(3)
    busy = fleet.shadow("node-00")
    fleet.cluster.shadows.replace_spec(
        busy.name,
        ShadowSpec(state=S.STAGED_AND_PERFORMED_UPDATE, version=NEW),
        busy.resource_version,
    )
    controller = fleet.controller(3, window="* * 3-4 * * * *")  # it is 10:00
    for _ in range(10):
        controller.tick()
        fleet.step_all()
        fleet.clock.advance(1)
    assert fleet.shadow("node-00").status.current_version == NEW  # type: ignore[union-attr]
    assert fleet.specs() == {"node-00": S.IDLE, "node-01": S.IDLE, "node-02": S.IDLE}
    rows = {row.node: row for row in controller.reports()}
    assert rows["node-01"].reason is Reason.OUTSIDE_WINDOW
    assert "next window opens at 2026-01-06T03:00:00+00:00" in rows["node-01"].detail


def test_a_crashed_node_is_sent_back_to_idle_once_and_counted_as_a_failure() -> None:
    fleet, metrics = Fleet(1), RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)
    controller.tick()
    fleet.fail("node-00")
    controller.tick()
    answered = fleet.shadow("node-00")
    assert answered.spec.state is S.IDLE
    for _ in range(3):
        fleet.clock.advance(2)
        controller.tick()
    assert fleet.shadow("node-00").resource_version == answered.resource_version, "not re-patched"
    assert metrics.failures == [("agent_error", "StagedAndPerformedUpdate")]
    assert [e.reason for e in fleet.cluster.events.recorded][-1] == "UpdateFailed"


def test_a_stuck_node_times_out_backs_off_and_frees_its_slot_once_its_agent_recovers() -> None:
    fleet, metrics = Fleet(2), RecordingMetrics()
    controller = fleet.controller(
        1, timeouts=StateTimeouts(staged_and_performed_update=60), metrics=metrics
    )
    controller.tick()
    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE
    fleet.clock.advance(61)  # the agent never reports
    controller.tick()

    stuck = fleet.shadow("node-00")
    assert stuck.spec.state is S.IDLE and stuck.spec.version == NEW
    assert stuck.status is not None
    assert stuck.status.crash_count == 1
    assert stuck.status.state_transition_failure_timestamp == fleet.clock.now()
    assert metrics.failures == [("timeout", "StagedAndPerformedUpdate")]
    event = fleet.cluster.events.recorded[-1]
    assert (event.reason, event.type) == ("UpdateTimedOut", EventType.WARNING)
    assert fleet.specs()["node-01"] is S.IDLE, "the slot is held until the agent is back in Idle"

    fleet.step("node-00")  # the agent reports Idle (recovered)
    controller.tick()
    assert fleet.specs()["node-01"] is S.STAGED_AND_PERFORMED_UPDATE
    row = {r.node: r for r in controller.reports()}["node-00"]
    assert row.reason is Reason.BACKING_OFF
    assert row.detail.endswith("last failure: timed out in StagedAndPerformedUpdate")


def test_a_timeout_is_counted_once_even_if_the_spec_write_must_be_retried() -> None:
    fleet, metrics = Fleet(1), RecordingMetrics()
    controller = fleet.controller(1, timeouts=StateTimeouts(idle=30), metrics=metrics)
    shadow = fleet.shadow("node-00")
    stamped = ShadowSpec(state=S.IDLE, state_transition_timestamp=fleet.clock.now(), version=NEW)
    fleet.cluster.shadows.replace_spec(shadow.name, stamped, shadow.resource_version)
    status = shadow.status.model_copy(update={"current_state": S.MONITORING_UPDATE})  # type: ignore[union-attr]
    fleet.cluster.shadows.update_status(shadow.name, status)
    fleet.clock.advance(31)
    controller.tick()
    controller.tick()
    assert metrics.failures == [("timeout", "Idle")]
    assert fleet.shadow("node-00").status.crash_count == 1  # type: ignore[union-attr]


def _outage(fleet: Fleet, controller: ControllerService, *, minutes: int) -> None:
    """The agents never report for `minutes`; the controller ticks every 10 s."""
    for _ in range(minutes * 6):
        fleet.clock.advance(10)
        controller.tick()


def test_a_thirty_minute_agent_outage_mid_update_adds_one_crash() -> None:
    fleet, metrics = Fleet(1), RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)
    controller.tick()
    fleet.step("node-00")  # staged; asked to reboot, then its agent goes down
    controller.tick()
    _outage(fleet, controller, minutes=30)
    assert fleet.shadow("node-00").status.crash_count == 1  # type: ignore[union-attr]
    assert metrics.failures == [("timeout", "RebootedIntoUpdate")]


def test_a_thirty_minute_outage_of_an_agent_that_reported_a_crash_adds_none() -> None:
    fleet, metrics = Fleet(1), RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)
    controller.tick()
    fleet.fail("node-00")  # crash count 1, then its agent goes down in ErrorReset
    controller.tick()
    _outage(fleet, controller, minutes=30)
    assert fleet.shadow("node-00").status.crash_count == 1  # type: ignore[union-attr]
    assert metrics.failures == [("agent_error", "StagedAndPerformedUpdate")]


def test_a_timeout_whose_spec_write_was_retried_is_not_counted_again_later() -> None:
    fleet = Fleet(1)
    controller = fleet.controller(1, timeouts=StateTimeouts(rebooted_into_update=60))
    controller.tick()
    fleet.step("node-00")
    controller.tick()  # asked to reboot; its agent goes down
    fleet.clock.advance(61)
    shadow = fleet.shadow("node-00")  # a pass counted the timeout; its spec write then conflicted
    assert shadow.status is not None
    counted = shadow.status.model_copy(
        update={"crash_count": 1, "state_transition_failure_timestamp": fleet.clock.now()}
    )
    fleet.cluster.shadows.update_status(shadow.name, counted)
    fleet.clock.advance(5)
    controller.tick()
    assert fleet.shadow("node-00").spec.state is S.IDLE
    _outage(fleet, controller, minutes=30)
    assert fleet.shadow("node-00").status.crash_count == 1  # type: ignore[union-attr]


def test_an_opted_out_node_gets_back_what_brupop_took_and_loses_its_shadow() -> None:
    fleet = Fleet(2)
    controller = fleet.controller(2)
    controller.tick()
    nodes = fleet.cluster.nodes
    nodes.set_annotations(
        "node-00", {CORDONED_BY_BRUPOP_ANNOTATION: "true", LB_EXCLUDED_BY_BRUPOP_ANNOTATION: "true"}
    )
    nodes.set_unschedulable("node-00", True)
    nodes.set_labels("node-00", {LB_EXCLUSION_LABEL: LB_EXCLUSION_VALUE, OPT_IN_LABEL: None})
    nodes.set_unschedulable("node-01", True)  # an administrator's cordon, not brupop's
    nodes.set_labels("node-01", {OPT_IN_LABEL: None})
    controller.tick()
    for name in ("node-00", "node-01"):
        assert fleet.cluster.shadows.store.find(shadow_name(name)) is None
    freed = nodes.get("node-00")
    assert not freed.unschedulable and LB_EXCLUSION_LABEL not in freed.labels
    assert CORDONED_BY_BRUPOP_ANNOTATION not in freed.annotations
    assert nodes.get("node-01").unschedulable, "an administrator's cordon stays"
    assert "ShadowRemoved" in [e.reason for e in fleet.cluster.events.recorded]


def test_a_shadow_whose_node_is_gone_is_deleted() -> None:
    fleet = Fleet(1)
    fleet.cluster.nodes.store.delete("node-00")  # the Node only; the shadow lingers
    fleet.controller(1).tick()
    assert fleet.shadows() == []


def test_only_the_lease_holder_writes_and_a_follower_takes_over_after_the_lease_expires() -> None:
    fleet = Fleet(4)
    first, second = fleet.controller(1), fleet.controller(1)
    first.tick()
    second.tick()
    assert first.elector.is_leader() and not second.elector.is_leader()
    assert fleet.outside_idle() == 1
    waited = 0
    while not second.elector.is_leader():  # the leader stops; the follower ticks every 2 s
        fleet.clock.advance(2)
        waited += 2
        second.tick()
    assert 15 <= waited <= 20, "takes over after the lease (15 s), within a renew interval"
    first.tick()
    assert not first.elector.is_leader(), "the old leader stands down"
    assert fleet.outside_idle() == 1


def test_a_leader_that_stops_releases_the_lease_for_an_immediate_takeover() -> None:
    fleet = Fleet(2)
    first, second = fleet.controller(1), fleet.controller(1)
    first.tick()
    second.tick()  # its first look at the Lease; the next is due in 20 s
    fleet.clock.advance(5)
    first.tick()  # renewed: an expiry would come 15 s after the next look sees this renewal
    fleet.clock.advance(5)
    first.elector.release()
    fleet.clock.advance(10)
    second.tick()
    assert second.elector.is_leader()


def test_a_spec_changed_between_list_and_write_is_decided_again_in_the_same_tick() -> None:
    fleet = Fleet(3)
    controller = fleet.controller(1)
    original_list = fleet.cluster.shadows.list
    calls = {"n": 0}

    def list_then_agent_writes() -> Listing[Shadow]:
        listing = original_list()
        calls["n"] += 1
        if calls["n"] == 1:  # another writer touches node-00 right after our list
            status = fleet.shadow("node-00").status
            assert status is not None
            fleet.cluster.shadows.update_status(shadow_name("node-00"), status)
        return listing

    fleet.cluster.shadows.list = list_then_agent_writes  # type: ignore[method-assign]
    controller.tick()
    assert calls["n"] == 1, "the conflict is repaired by reading that shadow, not every one"
    assert fleet.outside_idle() == 1
    assert fleet.specs()["node-00"] is S.STAGED_AND_PERFORMED_UPDATE


def test_a_list_missing_our_own_write_is_not_decided_from() -> None:
    fleet = Fleet(2)
    controller = fleet.controller(1)
    before = fleet.shadow("node-00")
    controller.tick()
    assert fleet.specs() == {"node-00": S.STAGED_AND_PERFORMED_UPDATE, "node-01": S.IDLE}
    # A lagging cache: node-00 as it was before our write (and no longer offered the update,
    # so it does not look ready), node-01 as it is now.
    lagging = before.model_copy(
        update={"status": before.status.model_copy(update={"target_version": "1.19.0"})}  # type: ignore[union-attr]
    )
    fresh_list = fleet.cluster.shadows.list
    fleet.cluster.shadows.list = lambda: Listing(  # type: ignore[method-assign]
        items=(lagging, fleet.shadow("node-01")), resource_version=None
    )
    fleet.clock.advance(2)
    controller.tick()
    fleet.cluster.shadows.list = fresh_list  # type: ignore[method-assign]
    assert fleet.outside_idle() == 1, "no second node started from the lagging list"


def test_the_controllers_own_node_updates_last() -> None:
    fleet = Fleet(3)
    controller = fleet.controller(1, controller_node="node-00")
    controller.tick()
    assert fleet.specs()["node-01"] is S.STAGED_AND_PERFORMED_UPDATE


def test_a_drain_held_by_a_budget_is_named_in_the_status_view() -> None:
    fleet = Fleet(1)
    controller = fleet.controller(1)
    fleet.cluster.add_pod(
        "shop",
        "web-1",
        "node-00",
        labels={"app": "web"},
        owners=(OwnerReference("ReplicaSet", "web", True),),
    )
    fleet.cluster.add_disruption_budget("shop", "web-pdb", {"app": "web"}, max_unavailable=0)
    controller.tick()
    fleet.step("node-00")
    controller.tick()  # spec RebootedIntoUpdate; the agent cordons and cannot drain
    fleet.cluster.nodes.set_unschedulable("node-00", True)
    controller.tick()
    row = controller.reports()[0]
    assert row.reason is Reason.DRAIN_BLOCKED
    assert row.detail == "drain blocked by PodDisruptionBudget shop/web-pdb (pods shop/web-1)"


def test_metrics_count_hosts_attempts_waiting_nodes_leadership_and_phases() -> None:
    fleet, metrics = Fleet(3), RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)
    controller.tick()
    assert metrics.leading is True and metrics.attempts == 1
    assert metrics.hosts == ({"Idle": 3}, {"1.19.0": 3})
    assert metrics.waiting["concurrency_full"] == 2 and metrics.waiting["outside_window"] == 0
    for _ in range(8):
        fleet.clock.advance(10)
        fleet.step("node-00")
        if fleet.shadow("node-00").spec.state is S.REBOOTED_INTO_UPDATE:
            fleet.cluster.nodes.set_unschedulable("node-00", True)
        controller.tick()
    phases = {phase for phase, _ in metrics.phases}
    assert {UpdatePhase.STAGING, UpdatePhase.UPDATE} <= phases
    assert all(seconds >= 0 for _, seconds in metrics.phases)


def test_each_tick_reports_the_cpu_time_of_its_loop_thread_alone() -> None:
    fleet, metrics = Fleet(3), RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)
    spent: list[float] = []

    def busy() -> None:  # another thread's CPU while the tick runs (a watch thread's)
        sum(range(5_000_000))
        spent.append(time.thread_time())

    other = threading.Thread(target=busy)
    other.start()
    controller.tick()
    other.join()
    controller.tick()
    assert len(metrics.pass_cpu) == 2
    assert all(0 < seconds < spent[0] / 2 for seconds in metrics.pass_cpu)


class RecordedWake(threading.Event):
    """The loop's wake-up event, recording each wait: the seconds it asked for, and whether a
    wake-up (rather than its time-out) ended it."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[tuple[float | None, bool]] = []

    def wait(self, timeout: float | None = None) -> bool:
        woken = super().wait(timeout)
        self.waits.append((timeout, woken))
        return woken


def test_an_idle_loop_ticks_once_per_tick_interval_not_every_fifty_milliseconds() -> None:
    """A loop ticks only between two waits: after its first tick, nothing wakes an idle loop and
    it waits out the whole tick interval (one ticking every 50 ms would ask for 0.05 s)."""
    fleet, metrics = Fleet(0), RecordingMetrics()
    for name in ("node-00", "node-01"):
        fleet.add_node(name, target=OLD)  # nothing to update: nothing wakes the loop
    controller = fleet.controller(1, metrics=metrics)
    wake = controller._wake = RecordedWake()
    stop = threading.Event()
    loop = threading.Thread(target=controller.run, args=(stop,), daemon=True)
    loop.start()
    wait_until(lambda: wake.waits, "the end of the loop's first wait")
    stop.set()
    loop.join(timeout=10)
    assert not loop.is_alive()
    assert metrics.pass_cpu, "the first tick came before the first wait"
    first_wait = wake.waits[0]
    assert first_wait == (controller.config.tick_seconds, False), "a whole interval, not woken"


def test_a_node_held_up_by_trouble_is_logged_once_not_every_pass() -> None:
    fleet = Fleet(1)
    controller = fleet.controller(1, timeouts=StateTimeouts(rebooted_into_update=10))
    controller.tick()
    fleet.step("node-00")
    controller.tick()  # asked to reboot; its agent never answers
    fleet.clock.advance(11)
    with capture_logs() as logs:
        for _ in range(4):
            controller.tick()
            fleet.clock.advance(1)
    reasons = [e for e in logs if e["event"] == "node.reason" and e["reason"] == "timed_out"]
    assert len(reasons) == 1
    assert [e["log_level"] for e in logs if e["event"] == "update.timed_out"] == ["warning"]


def test_every_phase_of_an_update_is_told_by_an_event_on_its_shadow() -> None:
    fleet = Fleet(1)
    controller = fleet.controller(1)
    for _ in range(20):
        controller.tick()
        if fleet.all_updated():
            break
        fleet.step_all()
        fleet.clock.advance(1)

    reasons = [e.reason for e in fleet.cluster.events.recorded if e.shadow_name == "brs-node-00"]
    assert reasons == ["UpdateStarted", "UpdateRebooting", "UpdateMonitoring", "UpdateCompleted"]
    messages = [e.message for e in fleet.cluster.events.recorded]
    assert f"Staged {NEW}; draining the node and rebooting into it" in messages
    assert f"Rebooted into {NEW}; monitoring it" in messages


class CountingPods:
    """The in-memory pods, noting each listing a controller asks for."""

    def __init__(self, pods: PodRepository) -> None:
        self._pods = pods
        self.listings: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("list"):
            self.listings.append(name)
        return getattr(self._pods, name)


class PodsCounted:
    """The fleet's cluster, its pods seen through CountingPods."""

    def __init__(self, cluster: InMemoryCluster, pods: CountingPods) -> None:
        self._cluster = cluster
        self.pods = cast(PodRepository, pods)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cluster, name)


def pod_listings_in_a_rollout(*, leading: bool) -> list[str]:
    """The pod listings a replica asks for over a four-node rollout, as leader or follower."""
    fleet = Fleet(4)
    for node in ("node-00", "node-01"):
        fleet.cluster.add_pod("apps", f"web-{node}", node)
    counting = CountingPods(fleet.cluster.pods)
    other = fleet.controller(2)
    container = fleet.container(2)
    container.cluster.override(PodsCounted(fleet.cluster, counting))
    watched = container.service()
    first, second = (watched, other) if leading else (other, watched)
    first.tick()
    for _ in range(40):  # staging, the drain before the reboot, the next starts
        second.tick()
        first.tick()
        fleet.step_all()
        fleet.clock.advance(1)
    assert watched.elector.is_leader() is leading
    assert fleet.all_updated()
    return counting.listings


def test_a_follower_lists_no_pods_for_drains_or_to_choose_whom_to_start() -> None:
    assert pod_listings_in_a_rollout(leading=True), "the leader does (the test can fail)"
    assert pod_listings_in_a_rollout(leading=False) == []

"""Stateful property test: whatever agents, stuck nodes, restarts and leader changes do, the
controller never lets more nodes out of Idle than the limit and never leaves a node stuck past
its timeout, and what it keeps per change (decisions, waiting counts) always equals a full
recomputation from a fresh list."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from brupop.domain.cluster.objects import Listing
from brupop.domain.policy.update_policy import NODE_PAUSED_LABEL
from brupop.domain.rollout.rollout import RolloutPlan, plan_rollout
from brupop.domain.rollout.transition_timeout import transition_deadline
from brupop.domain.shadow import Shadow, shadow_name
from brupop.domain.states import StateTimeouts, UpdateState
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME
from brupop.services.controller.service import ControllerService
from tests.unit.domain.rollout.books import plan_summary
from tests.unit.services.controller.fleet import Fleet, RecordingMetrics

LIMIT = 2
NODES = [f"node-{i:02d}" for i in range(6)]
TIMEOUTS = StateTimeouts(
    idle=20, staged_and_performed_update=40, rebooted_into_update=30, monitoring_update=20
)
node_names = st.sampled_from(NODES)
replica_ids = st.integers(min_value=0, max_value=1)


class RolloutMachine(RuleBasedStateMachine):
    """Two controller replicas and six scripted agents on one in-memory cluster."""

    def __init__(self) -> None:
        super().__init__()
        self.fleet = Fleet(len(NODES))
        self.metrics: dict[int, RecordingMetrics] = {}
        self.replicas = [self._new_replica(), self._new_replica()]
        self.stuck: set[str] = set()
        self.saved: dict[int, tuple[Listing[Shadow], int]] = {}
        self.versions = iter(f"1.{minor}.0" for minor in range(21, 200))

    window = "* * * * * * *"

    def _new_replica(self) -> ControllerService:
        metrics = RecordingMetrics()
        controller = self.fleet.controller(
            LIMIT, timeouts=TIMEOUTS, metrics=metrics, window=self.window
        )
        self.metrics[id(controller)] = metrics
        return controller

    # --- agents ------------------------------------------------------------------------

    @rule(node=node_names)
    def agent_progresses(self, node: str) -> None:
        if node not in self.stuck:
            self.fleet.step(node)

    @rule(node=node_names)
    def agent_fails(self, node: str) -> None:
        if node not in self.stuck:
            self.fleet.fail(node)

    @rule(node=node_names)
    def node_gets_stuck(self, node: str) -> None:
        self.stuck.add(node)

    @rule(node=node_names)
    def node_comes_back(self, node: str) -> None:
        self.stuck.discard(node)

    @rule(node=node_names)
    def a_newer_version_is_offered(self, node: str) -> None:
        shadow = self.fleet.shadow(node)
        if shadow.status is not None and shadow.status.current_state is UpdateState.IDLE:
            status = shadow.status.model_copy(update={"target_version": next(self.versions)})
            self.fleet.cluster.shadows.update_status(shadow.name, status)

    @rule(seconds=st.integers(min_value=1, max_value=45))
    def time_passes(self, seconds: int) -> None:
        self.fleet.clock.advance(seconds)

    # --- controllers -------------------------------------------------------------------

    @rule(replica=replica_ids)
    def controller_ticks(self, replica: int) -> None:
        controller = self.replicas[replica]
        controller.tick()
        if controller.elector.is_leader():
            self._assert_no_node_past_its_timeout(self.fleet.clock.now())
        self._assert_it_kept_what_a_full_recomputation_gives(controller)

    @rule(replica=replica_ids, node=node_names)
    def an_agent_writes_between_list_and_decision(self, replica: int, node: str) -> None:
        shadows = self.fleet.cluster.shadows
        fresh_list = shadows.list

        def list_then_agent_acts() -> Listing[Shadow]:
            listing = fresh_list()
            if node not in self.stuck:
                self.fleet.step(node)
            return listing

        shadows.list = list_then_agent_acts  # type: ignore[method-assign]
        try:
            self.replicas[replica].tick()
        finally:
            del shadows.list

    @rule(replica=replica_ids)
    def remember_what_the_leader_sees(self, replica: int) -> None:
        if self.replicas[replica].elector.is_leader():
            self.saved[replica] = (self.fleet.cluster.shadows.list(), self._term())

    @precondition(lambda self: bool(self.saved))
    @rule(replica=replica_ids)
    def controller_ticks_on_a_lagging_list(self, replica: int) -> None:
        saved = self.saved.get(replica)
        if saved is None or saved[1] != self._term():
            return  # only lists seen as leader in this very term (see docs/controller.md)
        shadows = self.fleet.cluster.shadows
        shadows.list = lambda: saved[0]  # type: ignore[method-assign]
        try:
            self.replicas[replica].tick()
        finally:
            del shadows.list

    @rule(replica=replica_ids)
    def controller_crashes_and_restarts(self, replica: int) -> None:
        self.replicas[replica] = self._new_replica()
        self.saved.pop(replica, None)

    @rule(replica=replica_ids)
    def controller_stops_gracefully_and_restarts(self, replica: int) -> None:
        self.replicas[replica].elector.release()
        self.replicas[replica] = self._new_replica()
        self.saved.pop(replica, None)

    # --- what must always hold ---------------------------------------------------------

    @invariant()
    def never_more_nodes_outside_idle_than_the_limit(self) -> None:
        assert self.fleet.outside_idle() <= LIMIT

    @invariant()
    def the_spec_never_asks_for_error_reset(self) -> None:
        assert all(s.spec.state is not UpdateState.ERROR_RESET for s in self.fleet.shadows())

    @invariant()
    def at_most_one_replica_may_write(self) -> None:
        assert sum(r.elector.is_leader() for r in self.replicas) <= 1

    def _assert_no_node_past_its_timeout(self, now: datetime) -> None:
        for shadow in self.fleet.shadows():
            deadline = transition_deadline(shadow, TIMEOUTS)
            assert deadline is None or now <= deadline, shadow_name(shadow.node_name)

    def _assert_it_kept_what_a_full_recomputation_gives(
        self, controller: ControllerService
    ) -> None:
        now, book = self.fleet.clock.now(), controller.fleet.book
        fresh = {s.name: s for s in self.fleet.shadows()}
        assert {n: book.shadow(n) for n in book.names()} == fresh
        incremental = book.plan(now, may_start=True)
        assert plan_summary(incremental) == plan_summary(self._full_plan(fresh, now))
        rows = Counter(r.reason.value for r in controller.reports() if r.reason.is_waiting)
        waiting = self.metrics[id(controller)].waiting
        assert {k: v for k, v in waiting.items() if v} == dict(rows)

    def _full_plan(self, fresh: dict[str, Shadow], now: datetime) -> RolloutPlan:
        rules = self.replicas[0].config.rollout_rules
        return plan_rollout(fresh.values(), now, rules, may_start=True)

    def _term(self) -> int:
        ns = self.fleet.cluster.namespace
        return self.fleet.cluster.leases.get(ns, DEFAULT_LEASE_NAME).transitions


class RolloutMachineInAWindow(RolloutMachine):
    """The same, with a window that opens for the first half of every minute: time alone opens
    and closes it, which changes the reasons of every node waiting to start."""

    window = "0-29 * * * * * *"


class RolloutMachineWithPauses(RolloutMachine):
    """The same, with the fleet paused and resumed by the update policy and nodes paused and
    resumed by their label: a controller pass never starts a paused node, and its book still
    agrees with the full recomputation that holds the labelled nodes back."""

    @rule(paused=st.booleans())
    def the_fleet_is_paused_or_resumed(self, paused: bool) -> None:
        self.fleet.cluster.policies.apply(
            {"metadata": {"name": "default"}, "spec": {"paused": paused}}
        )

    @rule(node=node_names, paused=st.booleans())
    def a_node_is_paused_or_resumed(self, node: str, paused: bool) -> None:
        self.fleet.cluster.nodes.set_labels(node, {NODE_PAUSED_LABEL: "true" if paused else None})

    @rule(replica=replica_ids)
    def controller_ticks(self, replica: int) -> None:
        idle = {s.node_name for s in self.fleet.shadows() if s.spec.state is UpdateState.IDLE}
        policy = self.fleet.cluster.policies.read().default
        fleet_paused = policy is not None and policy.spec is not None and policy.spec.paused
        paused = set(NODES) if fleet_paused else self._labelled_paused()
        super().controller_ticks(replica)
        started = {
            s.node_name
            for s in self.fleet.shadows()
            if s.node_name in idle and s.spec.state is UpdateState.STAGED_AND_PERFORMED_UPDATE
        }
        assert not started & paused

    def _labelled_paused(self) -> set[str]:
        nodes = self.fleet.cluster.nodes
        return {n for n in NODES if nodes.get(n).labels.get(NODE_PAUSED_LABEL) == "true"}

    def _full_plan(self, fresh: dict[str, Shadow], now: datetime) -> RolloutPlan:
        held_back = frozenset(shadow_name(n) for n in self._labelled_paused())
        rules = self.replicas[0].config.rollout_rules
        return plan_rollout(fresh.values(), now, rules, may_start=True, held_back=held_back)


RolloutMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_rollout_invariants = RolloutMachine.TestCase
RolloutMachineInAWindow.TestCase.settings = RolloutMachine.TestCase.settings
test_rollout_invariants_in_a_window = RolloutMachineInAWindow.TestCase
RolloutMachineWithPauses.TestCase.settings = RolloutMachine.TestCase.settings
test_rollout_invariants_with_pauses = RolloutMachineWithPauses.TestCase

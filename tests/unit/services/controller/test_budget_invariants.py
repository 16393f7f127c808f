"""Stateful property test: with random budgets (counts and percentages) over random node
groups, a random global `maxConcurrent`, agents that progress or fail, controller restarts and
leader changes, no budget group and not the global limit ever has more nodes outside Idle than
it allows (counted from the shadows); the book with the start rules still agrees with the full
recomputation given the same rules. A variant changes the budgets and the nodes' groups during
the rollout: nodes already updating then finish, but no start ever takes a group over."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import structlog
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from brupop.domain.policy.effective_policy import policy_from_spec
from brupop.domain.policy.scheduling_policy import concurrency_limit
from brupop.domain.policy.update_policy import HALT_AFTER_FAILURES_MAX, UpdatePolicySpec
from brupop.domain.rollout.rollout import RolloutPlan, plan_rollout
from brupop.domain.shadow import Shadow
from brupop.domain.starting.budget_rule import group_of
from brupop.domain.states import UpdateState
from brupop.services.controller.mirrors.node_pods import NodePods
from brupop.services.controller.mirrors.pod_census import PodCensus
from brupop.services.controller.service import ControllerService
from brupop.services.controller.starts.offered_versions import OfferedVersions
from brupop.services.controller.starts.start_rules import StartRules
from tests.unit.domain.rollout.books import plan_summary
from tests.unit.services.controller.test_rollout_invariants import (
    LIMIT,
    NODES,
    RolloutMachine,
    node_names,
)

ZONE = "topology.kubernetes.io/zone"
NODEGROUP = "eks.amazonaws.com/nodegroup"
labels = st.sampled_from([None, "a", "b", "c"])
limits = st.one_of(
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=1, max_value=100).map(lambda p: f"{p}%"),
)
budgets = st.lists(
    st.fixed_dictionaries({"groupBy": st.sampled_from([ZONE, NODEGROUP]), "maxConcurrent": limits}),
    max_size=2,
)


def _outside_idle(shadow: Shadow) -> bool:
    status = shadow.status
    outside = status is not None and status.current_state is not UpdateState.IDLE
    return shadow.spec.state is not UpdateState.IDLE or outside


class BudgetMachine(RolloutMachine):
    """The rollout machine's agents, restarts and leader changes under a budget policy."""

    @initialize(
        zones=st.lists(labels, min_size=len(NODES), max_size=len(NODES)),
        groups=st.lists(labels, min_size=len(NODES), max_size=len(NODES)),
        chosen=budgets,
        global_limit=st.one_of(st.none(), limits),
    )
    def a_policy_with_budgets(
        self,
        zones: list[str | None],
        groups: list[str | None],
        chosen: list[dict[str, Any]],
        global_limit: int | str | None,
    ) -> None:
        for node, zone, group in zip(NODES, zones, groups, strict=True):
            self.fleet.cluster.nodes.set_labels(node, {ZONE: zone, NODEGROUP: group})
        self._apply(chosen, global_limit)

    def _apply(self, chosen: list[dict[str, Any]], global_limit: int | str | None) -> None:
        # No halt: failures are part of the test, and a halted fleet would start nothing.
        spec: dict[str, Any] = {"budgets": chosen, "haltAfterFailures": HALT_AFTER_FAILURES_MAX}
        if global_limit is not None:
            spec["maxConcurrent"] = global_limit
        self.spec = UpdatePolicySpec.model_validate(spec)
        self.fleet.cluster.policies.apply({"metadata": {"name": "default"}, "spec": spec})

    # --- what must always hold ---------------------------------------------------------

    @invariant()
    def never_more_nodes_outside_idle_than_the_limit(self) -> None:
        assert self._over_limit(self.fleet.shadows()) == []

    def _over_limit(self, counted: list[Shadow], only: set[str] | None = None) -> list[str]:
        """The limits the shadows counted (those outside Idle among them) go over; `only`:
        the budget groups of these nodes alone."""
        shadows = [s for s in counted if _outside_idle(s)]
        over = []
        value = self.spec.max_concurrent
        limit = LIMIT if value is None else concurrency_limit(value, len(NODES))
        if len(shadows) > limit:
            over.append(f"global {len(shadows)}/{limit}")
        nodes = {n: self.fleet.cluster.nodes.get(n) for n in NODES}
        for budget in self.spec.budgets:
            sizes = Counter(group_of(node, budget.group_by) for node in nodes.values())
            used = Counter(group_of(nodes[s.node_name], budget.group_by) for s in shadows)
            checked = {group_of(nodes[n], budget.group_by) for n in only or NODES}
            for group, count in used.items():
                if group not in checked:
                    continue
                allowed = concurrency_limit(budget.max_concurrent, sizes[group])
                if count > allowed:
                    over.append(f"{budget.group_by}={group} {count}/{allowed}")
        return over

    def _assert_it_kept_what_a_full_recomputation_gives(
        self, controller: ControllerService
    ) -> None:
        super()._assert_it_kept_what_a_full_recomputation_gives(controller)
        now, book = self.fleet.clock.now(), controller.fleet.book
        policy = policy_from_spec(self.spec)
        rules = self._fresh_rules(controller)
        limit = rules.limit(policy, controller.config.rollout_rules.limit)
        kept = book.plan(now, may_start=True, limit=limit, choose=rules.chooser(policy, now))
        assert plan_summary(kept) == plan_summary(self._full_plan_with_rules(controller, now))

    def _fresh_rules(self, controller: ControllerService) -> StartRules:
        """Start rules with nothing remembered, over the same mirror and cluster (and one
        census and pod cache for the whole run: both only spare listings)."""
        if not hasattr(self, "_census"):
            pods = self.fleet.cluster.pods
            self._census = PodCensus(pods, self.fleet.cluster.nodes)
            self._on_node = NodePods(pods, self.fleet.clock, structlog.get_logger())
        return StartRules(controller.fleet, self._census, OfferedVersions(None), self._on_node)

    def _full_plan_with_rules(self, controller: ControllerService, now: datetime) -> RolloutPlan:
        policy = policy_from_spec(self.spec)
        rules = self._fresh_rules(controller)
        own = controller.config.rollout_rules
        limited = type(own)(rules.limit(policy, own.limit), own.timeouts)
        fresh = self.fleet.shadows()
        return plan_rollout(fresh, now, limited, may_start=True, choose=rules.chooser(policy, now))


class BudgetMachineWithChanges(BudgetMachine):
    """The same, with the budgets and the nodes' groups changing mid-rollout: a node already
    outside Idle may then leave its group over its new limit until it finishes, so what is
    checked is that no start takes a group over."""

    @rule(chosen=budgets, global_limit=st.one_of(st.none(), limits))
    def the_budgets_change(
        self, chosen: list[dict[str, Any]], global_limit: int | str | None
    ) -> None:
        self._apply(chosen, global_limit)

    @rule(node=node_names, zone=labels)
    def a_node_changes_zone(self, node: str, zone: str | None) -> None:
        self.fleet.cluster.nodes.set_labels(node, {ZONE: zone})

    @rule(replica=st.integers(min_value=0, max_value=1))
    def controller_ticks(self, replica: int) -> None:
        before = {s.name: s for s in self.fleet.shadows()}
        super().controller_ticks(replica)
        after = self.fleet.shadows()
        started = [
            s
            for s in after
            if s.spec.state is UpdateState.STAGED_AND_PERFORMED_UPDATE
            and before[s.name].spec.state is UpdateState.IDLE
        ]
        if started:
            assert self._over_limit(after, only={s.node_name for s in started}) == []

    @invariant()
    def never_more_nodes_outside_idle_than_the_limit(self) -> None:
        return None  # checked after each start instead (limits change under nodes in flight)


# More examples than the plain rollout machine: the policy drawn at the start must also
# hit the cases where a budget, not the global limit, is the one that binds.
BudgetMachine.TestCase.settings = settings(RolloutMachine.TestCase.settings, max_examples=150)
test_budgets_hold_at_every_step = BudgetMachine.TestCase
BudgetMachineWithChanges.TestCase.settings = BudgetMachine.TestCase.settings
test_no_start_takes_a_budget_over_when_budgets_and_groups_change = BudgetMachineWithChanges.TestCase

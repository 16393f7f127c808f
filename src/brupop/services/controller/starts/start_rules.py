"""StartRules: the update policy's start rules and order, put together once per pass.

`rules_in_force` is the one place the rule list is composed (a rule per budget; the other
scheduling rules add theirs there). The rules are built only when a pass can start a node
(the book calls the chooser only then), so a pass with nothing to start costs nothing more;
the holds the chooser met are kept for the REASON column (`holds`). The global limit is the
policy's `maxConcurrent` when set (a count, or a percentage of the opted-in nodes), else the
environment's. Budget use for the status and the metric is counted each pass from the nodes
holding a slot; the group sizes are counted again only when a Node changed.

The cluster census (`room_check`) is taken only by a pass that can start a node: it feeds the
capacity check (the last rule) and the cheapest-first order's eviction costs; while it cannot
be read the order is the book's (controller's node last, fewest crashes, name), as with
`order: name`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.effective_policy import EffectivePolicy
from brupop.domain.policy.scheduling_policy import Budget, StartOrder, concurrency_limit
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import Chooser
from brupop.domain.starting.autoscaler_holds import PodsOnNode, autoscaler_rules
from brupop.domain.starting.budget_rule import BudgetRule, BudgetUse, group_sizes
from brupop.domain.starting.start_holds import StartCandidate, StartHold, StartRule
from brupop.domain.starting.start_order import EvictionCosts
from brupop.domain.starting.start_selection import StartSelection
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.mirrors.pod_census import PodCensus
from brupop.services.controller.starts.offered_versions import OfferedVersions
from brupop.services.controller.starts.room_check import RoomCheck, RoomKey

CHOICE_REUSE = timedelta(seconds=10)
"""How long a pass whose inputs (policy, free slots, holders, Node changes, ready list, cost
source, census and nodes leaving) equal those of the last one, which started nothing, starts
nothing either instead of trying every ready node again: a fleet held by its budgets at 10k
nodes costs ~25 ms a pass otherwise. A hold that lifts at a known moment (a release age, a
node's age) ends the reuse then; what the inputs do not show (a blocking pod going away) is
seen again at most this much later. A choice that started nodes is never reused: the inputs
do not show a candidate's offered version, which may have changed if its start failed."""


def rules_in_force(
    policy: EffectivePolicy,
    groups: BudgetGroups,
    holding: Iterable[str],
    versions: OfferedVersions,
    pods: PodsOnNode,
    room: RoomCheck,
) -> tuple[StartRule, ...]:
    """The start rules of `policy`, fresh for one pass (they count what starts in it);
    `holding`: the shadows holding a slot; `versions`: the first-seen times of the offered
    versions (the version gate); `pods`: a candidate's pods (the blocking-pod rule); `room`:
    the capacity check (the last rule: the costliest to ask)."""
    holding = tuple(holding)
    rules: list[StartRule] = []
    if policy.scheduling.version is not None:
        rules.append(versions.gate(policy.scheduling.version))  # a pin outlasts budgets
    rules += groups.rules(policy.scheduling.budgets, holding)
    rules += autoscaler_rules(policy.scheduling, pods)
    rules += room.rules(policy, holding)
    return tuple(rules)


class _GroupSizes(NamedTuple):
    """The nodes of each group of one budget label, as counted after `seen` Node changes."""

    seen: int
    sizes: Counter[str]


class BudgetGroups:
    """Group sizes per budget label (cached until a Node changes) and the rules they give."""

    def __init__(self, fleet: FleetMirror) -> None:
        self._fleet = fleet
        self._sizes: dict[str, _GroupSizes] = {}

    def rules(self, budgets: Iterable[Budget], holding: Iterable[str]) -> list[BudgetRule]:
        """A fresh rule per budget, with the groups' nodes in use by `holding` shadows."""
        budgets = tuple(budgets)
        if not budgets:
            return []
        in_use = [self._node_of(name) for name in holding]
        return [BudgetRule(b, self._sizes_of(b.group_by), in_use) for b in budgets]

    def usage(self, budgets: Iterable[Budget], holding: Iterable[str]) -> tuple[BudgetUse, ...]:
        """Every budget's groups with their nodes in use (by `holding` shadows) and limit."""
        return tuple(use for rule in self.rules(budgets, holding) for use in rule.usage())

    def _node_of(self, shadow: str) -> Node | None:
        facts = self._fleet.book.facts(shadow)
        return self._fleet.nodes.get(facts.node_name) if facts is not None else None

    def _sizes_of(self, key: str) -> Counter[str]:
        seen = self._fleet.node_changes
        cached = self._sizes.get(key)
        if cached is None or cached.seen != seen:
            sizes = group_sizes(self._fleet.nodes.values(), key)
            cached = self._sizes[key] = _GroupSizes(seen, sizes)
        return cached.sizes


class StartRules:
    """The global limit, the chooser of starts and the holds it met, for one controller."""

    def __init__(
        self,
        fleet: FleetMirror,
        census: PodCensus,
        versions: OfferedVersions,
        pods: PodsOnNode,
    ) -> None:
        self._fleet = fleet
        self._versions = versions
        self._pods = pods
        self.groups = BudgetGroups(fleet)
        self.room = RoomCheck(fleet, census)
        self.holds: dict[str, StartHold] = {}
        """The ready shadows a rule held in the last pass that could start one."""
        self._last: _Choice | None = None

    def limit(self, policy: EffectivePolicy, default: ConcurrencyLimit) -> ConcurrencyLimit:
        """The global limit in force: the policy's `maxConcurrent` of the opted-in nodes."""
        value = policy.scheduling.max_concurrent
        if value is None:
            return default
        return ConcurrencyLimit(concurrency_limit(value, max(1, len(self._fleet.nodes))))

    def chooser(self, policy: EffectivePolicy, now: datetime) -> Chooser:
        """What the book calls, only when a start is possible, to pick this pass's starts."""
        self.holds = {}
        by_cost = policy.scheduling.order is StartOrder.CHEAPEST_FIRST

        def choose(ready: list[str], free: int) -> list[str]:
            census = self.room.take(policy, now, for_order=by_cost)
            costs = census if by_cost else None
            holders = self._fleet.book.holders()
            rules = rules_in_force(
                policy, self.groups, holders, self._versions, self._pods, self.room
            )
            inputs = (policy, free, frozenset(holders), self._fleet.node_changes)
            room = self.room.key(holders)
            last = self._last
            if last is not None and now < last.expires and last.same(inputs, ready, costs, room):
                self.holds = last.holds
                return []
            selection = StartSelection(
                rules,
                self._candidate,
                now,
                costs=costs,
                controller_node=self._fleet.book.controller_node,
            )
            chosen = selection(ready, free)
            self.holds = selection.holds
            self._last = None
            if not chosen:
                # Only a choice of no start is kept: one that started nodes changes the holders
                # when its writes land, and when they did not (a conflict with an agent's
                # report), the candidates' facts may have changed (a version past the pin).
                lifts = [hold.until for hold in self.holds.values() if hold.until is not None]
                expires = min([now + CHOICE_REUSE, *lifts])
                self._last = _Choice(
                    expires=expires,
                    inputs=inputs,
                    ready=ready,
                    costs=costs,
                    room=room,
                    holds=self.holds,
                )
            return chosen

        return choose

    def usage(self, policy: EffectivePolicy, holding: Iterable[str]) -> tuple[BudgetUse, ...]:
        """The budgets' groups in use after a pass (`holding`: shadows in a slot or started)."""
        return self.groups.usage(policy.scheduling.budgets, holding)

    def _candidate(self, shadow: str) -> StartCandidate:
        facts = self._fleet.book.facts(shadow)
        assert facts is not None  # the book lists only the shadows it holds as ready
        node = self._fleet.nodes.get(facts.node_name)
        return StartCandidate(shadow, facts.node_name, facts.target_version, node)


@dataclass(frozen=True)
class _Choice:
    """A pass's choice of no start, until when it may be reused, and what it was made from."""

    expires: datetime
    inputs: tuple[object, ...]
    ready: list[str]
    costs: EvictionCosts | None
    room: RoomKey
    holds: dict[str, StartHold]

    def same(
        self,
        inputs: tuple[object, ...],
        ready: list[str],
        costs: object,
        room: RoomKey,
    ) -> bool:
        """Made from these very inputs (the same cost source and census objects: a census is
        replaced, never changed)."""
        return (
            costs is self.costs
            and room.census is self.room.census
            and room.leaving == self.room.leaving
            and inputs == self.inputs
            and ready == self.ready
        )

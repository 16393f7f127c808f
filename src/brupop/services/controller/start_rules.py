"""StartRules: the update policy's start rules and order, put together once per pass.

`rules_in_force` is the one place the rule list is composed (a rule per budget; the other
scheduling rules add theirs there). The rules are built only when a pass can start a node
(the book calls the chooser only then), so a pass with nothing to start costs nothing more;
the holds the chooser met are kept for the REASON column (`holds`). The global limit is the
policy's `maxConcurrent` when set (a count, or a percentage of the opted-in nodes), else the
environment's. Budget use for the status and the metric is counted each pass from the nodes
holding a slot; the group sizes are counted again only when a Node changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from brupop.domain.autoscaler_holds import PodsOnNode, autoscaler_rules
from brupop.domain.budget_rule import BudgetRule, BudgetUse, group_sizes
from brupop.domain.cluster import Node
from brupop.domain.concurrency import ConcurrencyLimit
from brupop.domain.effective_policy import EffectivePolicy
from brupop.domain.rollout import Chooser
from brupop.domain.scheduling_policy import Budget, StartOrder, concurrency_limit
from brupop.domain.start_holds import StartCandidate, StartHold, StartRule
from brupop.domain.start_order import EvictionCosts
from brupop.domain.start_selection import StartSelection
from brupop.services.controller.fleet_mirror import FleetMirror


@dataclass(frozen=True)
class StartPorts:
    """What the start rules and the order read beyond the shadows and the Nodes."""

    costs: EvictionCosts | None = None
    """Eviction cost by node (cheapest-first); None: every node costs the same."""
    pods: PodsOnNode | None = None
    """The pods of a candidate, for the blocking-pod rule; None: that rule is off."""


def rules_in_force(
    policy: EffectivePolicy, groups: BudgetGroups, holding: Iterable[str], ports: StartPorts
) -> tuple[StartRule, ...]:
    """The start rules of `policy`, fresh for one pass (they count what starts in it);
    `holding`: the shadows holding a slot."""
    rules: list[StartRule] = []
    rules += groups.rules(policy.scheduling.budgets, holding)
    rules += autoscaler_rules(policy.scheduling, ports.pods)
    return tuple(rules)


class BudgetGroups:
    """Group sizes per budget label (cached until a Node changes) and the rules they give."""

    def __init__(self, fleet: FleetMirror) -> None:
        self._fleet = fleet
        self._sizes: dict[str, tuple[int, Counter[str]]] = {}

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
        if cached is None or cached[0] != seen:
            cached = self._sizes[key] = (seen, group_sizes(self._fleet.nodes.values(), key))
        return cached[1]


class StartRules:
    """The global limit, the chooser of starts and the holds it met, for one controller."""

    def __init__(self, fleet: FleetMirror, ports: StartPorts | None = None) -> None:
        self._fleet, self._ports = fleet, ports or StartPorts()
        self.groups = BudgetGroups(fleet)
        self.holds: dict[str, StartHold] = {}
        """The ready shadows a rule held in the last pass that could start one."""

    def limit(self, policy: EffectivePolicy, default: ConcurrencyLimit) -> ConcurrencyLimit:
        """The global limit in force: the policy's `maxConcurrent` of the opted-in nodes."""
        value = policy.scheduling.max_concurrent
        if value is None:
            return default
        return ConcurrencyLimit(concurrency_limit(value, max(1, len(self._fleet.nodes))))

    def chooser(self, policy: EffectivePolicy, now: datetime) -> Chooser:
        """What the book calls, only when a start is possible, to pick this pass's starts."""
        self.holds = {}
        costs = self._ports.costs if policy.scheduling.order is StartOrder.CHEAPEST_FIRST else None

        def choose(ready: list[str], free: int) -> list[str]:
            rules = rules_in_force(policy, self.groups, self._fleet.book.holders(), self._ports)
            selection = StartSelection(
                rules,
                self._candidate,
                now,
                costs=costs,
                controller_node=self._fleet.book.controller_node,
            )
            chosen = selection(ready, free)
            self.holds = selection.holds
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

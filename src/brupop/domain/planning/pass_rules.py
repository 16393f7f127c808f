"""The start rules of one virtual pass, composed as the controller composes them
(`services/controller/starts/start_rules.rules_in_force`): the version gate first (a pin
outlasts budgets), a rule per budget, the autoscaler's rules with the blocking-pod rule, and the
capacity check last.

What the controller reads through ports comes from the plan's census instead: the pods of a
node, the Nodes, the budgets. The nodes in flight count as leaving for the capacity check for
their whole update (the controller counts them only until their reboot), so the plan errs on
the side of waiting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from brupop.domain.capacity.capacity_rule import CapacityRule, RoomVerdicts
from brupop.domain.capacity.fleet_census import FleetCensus
from brupop.domain.cluster.objects import Node, Pod
from brupop.domain.policy.effective_policy import EffectivePolicy
from brupop.domain.starting.autoscaler_holds import autoscaler_rules
from brupop.domain.starting.budget_rule import BudgetRule, group_sizes
from brupop.domain.starting.release_quorum import VersionQuorum
from brupop.domain.starting.start_holds import StartRule
from brupop.domain.starting.version_gate import VersionGate


class PassRules:
    """Fresh start rules for each virtual pass of one plan."""

    def __init__(
        self,
        policy: EffectivePolicy,
        opted_in: Sequence[Node],
        census: FleetCensus,
        first_seen: Mapping[str, datetime],
        quorum: VersionQuorum | None = None,
    ) -> None:
        self._policy = policy
        self._census = census
        self._first_seen = first_seen
        self._quorum = quorum
        budgets = policy.scheduling.budgets
        self._sizes: dict[str, Counter[str]] = {
            b.group_by: group_sizes(opted_in, b.group_by) for b in budgets
        }
        self._verdicts = RoomVerdicts()
        self._misses = max(1, len(census.nodes))  # a virtual pass stands for many real ones

    def pods_on(self, node_name: str) -> Sequence[Pod] | None:
        """The pods of `node_name` in the census (`PodsOnNode`)."""
        return self._census.pods_on(node_name)

    def rules(self, in_use: Iterable[Node | None], leaving: Iterable[str]) -> tuple[StartRule, ...]:
        """The rules for one pass; `in_use`: the Nodes of the shadows holding a slot;
        `leaving`: their names, for the capacity check."""
        scheduling = self._policy.scheduling
        rules: list[StartRule] = []
        if scheduling.version is not None:
            rules.append(VersionGate(scheduling.version, self._first_seen, self._quorum))
        in_use = tuple(in_use)
        rules += [BudgetRule(b, self._sizes[b.group_by], in_use) for b in scheduling.budgets]
        rules += autoscaler_rules(scheduling, self.pods_on)
        if scheduling.capacity_check:
            rules.append(CapacityRule(self._census, leaving, self._verdicts, misses=self._misses))
        return tuple(rules)

"""SchedulingFacts: the fleet-wide scheduling facts of a controller's last pass, as its
`/status` sends them (under `scheduling`) and `brupop status` shows them above the table.

They are the budgets' groups with their nodes in use against their limits, the update time
finishBy expects and how many recorded updates it is drawn from (none: the 15-minute guess),
whether finishBy is in force, and the clock's hold on every start (a blackout, the policy's
windows, finishBy, or the environment's window closed) with the sentence REASON gives it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brupop.domain.reason import Explanation
from brupop.domain.starting.budget_rule import BudgetUse
from brupop.domain.starting.update_durations import DEFAULT_EXPECTED_SECONDS


@dataclass(frozen=True)
class SchedulingFacts:
    """What the last pass knew of budgets, the expected update time and the clock's hold."""

    budgets: tuple[BudgetUse, ...] = ()
    expected_seconds: int = DEFAULT_EXPECTED_SECONDS
    updates_counted: int = 0
    """How many recorded update durations `expected_seconds` comes from (0: the guess)."""
    finish_by: bool = False
    """finishBy is in force (a policy object that does not turn it off)."""
    hold: Explanation | None = None
    """The clock's hold on every start (its reason code and sentence); None: no hold."""

    def as_json(self) -> dict[str, Any]:
        """The `scheduling` entry of the controller's `/status`."""
        hold = self.hold
        return {
            "budgets": [
                {"budget": u.budget, "group": u.group, "in_use": u.in_use, "limit": u.limit}
                for u in self.budgets
            ],
            "expected_update": {
                "seconds": self.expected_seconds,
                "from_updates": self.updates_counted,
                "finish_by": self.finish_by,
            },
            "hold": None if hold is None else {"reason": hold.reason.value, "detail": hold.detail},
        }

"""The plan as text: a heading, the fleet's notes, then one row per node.

Times are shown as the wall time in UTC and the delay from the plan's start (`10:15 (+15m)`);
every cell that came from the cluster (names, versions, the holds' sentences) goes through
`printable` before the widths are taken.
"""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.domain.planning.fleet_plan import FleetPlan, NodePlan, Outlook, PlannedHold
from brupop.domain.printable import printable
from brupop.domain.starting.autoscaler_holds import span

COLUMNS = ("ORDER", "NODE", "START", "FINISH", "FINISH BY", "WAITS FOR")
DETAIL_MAX_LENGTH = 400
_POLICY_SOURCES = {
    "environment": "none (the controller's environment alone)",
    "policy": "the default BottlerocketUpdatePolicy",
    "last good policy": "the last good policy (the default object cannot be read)",
}


def format_plan(
    plan: FleetPlan,
    *,
    learned_from: int,
    duration_given: bool,
    policy_file: str | None = None,
    limit_source: str | None = None,
) -> str:
    """The whole text of `brupop plan` (`policy_file`: the `--policy` planned with;
    `limit_source`: where the limit comes from)."""
    heading = _heading(
        plan, learned_from=learned_from, duration_given=duration_given, limit_source=limit_source
    )
    policy = policy_file or _POLICY_SOURCES.get(plan.policy_source, plan.policy_source)
    lines = [f"{heading}; policy: {printable(policy)}{_done(plan)}"]
    lines += [f"note: {printable(note)}" for note in plan.notes]
    if not plan.nodes:
        return "\n".join([*lines, "No opted-in nodes found."])
    lines.append(format_rows(plan))
    return "\n".join(lines)


def format_rows(plan: FleetPlan) -> str:
    """The node rows under their column titles, separated by three spaces as kubectl does."""
    cells = [list(COLUMNS)] + [_cells(node, plan.taken_at) for node in plan.nodes]
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS) - 1)]
    return "\n".join(
        "   ".join([*(v.ljust(w) for v, w in zip(row, widths, strict=False)), row[-1]]).rstrip()
        for row in cells
    )


def _heading(
    plan: FleetPlan, *, learned_from: int, duration_given: bool, limit_source: str | None
) -> str:
    if duration_given:
        source = "as given"
    elif learned_from:
        source = f"the p90 of the last {learned_from} updates"
    else:
        source = "a guess: no update measured yet; see --duration"
    limit = "unlimited" if plan.limit is None else str(plan.limit)
    if limit_source is not None:
        limit = f"{limit} ({printable(limit_source)})"
    staged = ""
    if plan.staged_seconds is not None:
        staged = f", {span(plan.staged_seconds)} when staged ahead"
    return (
        f"plan from {plan.taken_at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC: each update "
        f"{span(plan.expected_seconds)} ({source}){staged}; at most {limit} at once; "
        f"{plan.order} order"
    )


def _done(plan: FleetPlan) -> str:
    finish = plan.finish
    return f"; the last planned node done at {_when(finish, plan.taken_at)}" if finish else ""


def _cells(node: NodePlan, origin: datetime) -> list[str]:
    order = str(node.order) if node.order is not None else "-"
    if node.outlook is Outlook.PLANNED:
        start, finish = _when(node.start, origin), _when(node.finish, origin)
    elif node.outlook is Outlook.IN_FLIGHT:
        start, finish = "updating", _when(node.finish, origin)
    else:
        start = finish = node.outlook.value
    return [
        order,
        printable(node.node),
        start,
        finish,
        _finish_by(node),
        printable(_waits(node, origin), DETAIL_MAX_LENGTH),
    ]


def _finish_by(node: NodePlan) -> str:
    if node.finish_by is None:
        return "-"
    return "met" if node.finish_by.met else "missed"


def _waits(node: NodePlan, origin: datetime) -> str:
    parts = [_hold(hold, origin) for hold in node.holds]
    if node.staged_ahead:
        parts.append(f"{node.target_version} staged ahead")
    elif node.preparing_ahead:
        parts.append(f"preparing {node.target_version} ahead")
    if node.finish_by is not None and not node.finish_by.met:
        parts.append(f"finishBy: {node.finish_by.detail}")
    parts += [f"drain: {blocker}" for blocker in node.drain_blockers]
    if node.outlook is Outlook.UP_TO_DATE and node.current_version:
        parts.append(f"runs {node.current_version}")
    return "; ".join(parts)


def _hold(hold: PlannedHold, origin: datetime) -> str:
    if hold.until is None:
        return f"{hold.reason.value}, no end in sight: {hold.detail}"
    return f"{hold.reason.value} until {_when(hold.until, origin)}: {hold.detail}"


def _when(moment: datetime | None, origin: datetime) -> str:
    if moment is None:
        return "-"
    utc, start = moment.astimezone(UTC), origin.astimezone(UTC)
    later = span(max(0.0, (moment - origin).total_seconds()))
    wall = f"{utc:%H:%M}" if utc.date() == start.date() else f"{utc:%m-%d %H:%M}"
    return f"{wall} (+{later})"

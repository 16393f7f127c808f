"""plan_rollout_ahead: the plan of a fleet, from one snapshot and the plan's assumptions.

It runs the virtual rollout (`virtual_rollout`), then writes each opted-in node's line: its
place in the start order, expected start and finish, the holds it met and until when, the
budgets its drain would meet, and whether it finishes by its window's close. The notes add
every rule of the policy that does nothing over these nodes (`policy_lint`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from brupop.domain.planning.drain_blockers import drain_blockers, refusing_budgets
from brupop.domain.planning.fleet_plan import FleetPlan, NodePlan, Outlook
from brupop.domain.planning.plan_inputs import FleetSnapshot, PlanAssumptions
from brupop.domain.planning.virtual_rollout import VirtualRollout, staged_ahead
from brupop.domain.policy.policy_lint import lint_policy
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.shadow import Shadow
from brupop.domain.timestamps import later

_ROW_ORDER = {
    Outlook.IN_FLIGHT: 0,
    Outlook.PLANNED: 1,
    Outlook.NEVER: 2,
    Outlook.NO_STATUS: 3,
    Outlook.UP_TO_DATE: 4,
}


def plan_rollout_ahead(snapshot: FleetSnapshot, assumptions: PlanAssumptions) -> FleetPlan:
    """What the controller would do with this fleet, node by node, from `snapshot.taken_at`."""
    run = VirtualRollout(snapshot, assumptions)
    blocked_at_start = run.fleet.hold(run.began)
    run.run()
    refusing = refusing_budgets(snapshot.pods, snapshot.budgets)
    order = {name: index for index, name in enumerate(run.started_in_order(), start=1)}
    expected = timedelta(seconds=assumptions.expected_seconds)
    by_node = {s.node_name: s for s in snapshot.shadows if s.node_name in run.nodes}
    lines: list[NodePlan] = []
    for node in run.nodes:
        shadow = by_node.get(node)
        line = _line(node, shadow, run, order, expected)
        if line.outlook in (Outlook.PLANNED, Outlook.NEVER, Outlook.IN_FLIGHT):
            blockers = drain_blockers(run.census.pods_on(node), refusing)
            line = replace(line, drain_blockers=blockers)
        lines.append(line)
    lines.sort(key=_row_key)
    notes = []
    if blocked_at_start is not None and blocked_at_start.until is None:
        notes.append(f"no node starts: {blocked_at_start.detail}")
    for shadow_name, why in sorted(run.book.quarantined().items()):
        notes.append(f"{shadow_name} is quarantined and never starts: {why}")
    never = sum(1 for line in lines if line.outlook is Outlook.NEVER)
    if never:
        verb = "starts" if never == 1 else "start"
        notes.append(f"{never} of {len(lines)} nodes never {verb} within the plan: see their holds")
    notes += [str(finding) for finding in lint_policy(snapshot.policy, snapshot.nodes, run.began)]
    return FleetPlan(
        taken_at=snapshot.taken_at,
        expected_seconds=assumptions.expected_seconds,
        limit=run.limit.maximum,
        order=snapshot.policy.scheduling.order.value,
        policy_source=snapshot.policy.source.value,
        nodes=tuple(lines),
        notes=tuple(notes),
        staged_seconds=assumptions.staged_seconds,
    )


def _line(
    node: str,
    shadow: Shadow | None,
    run: VirtualRollout,
    order: dict[str, int],
    expected: timedelta,
) -> NodePlan:
    if shadow is None:
        return NodePlan(node, Outlook.NO_STATUS)
    name, status = shadow.name, shadow.status
    if status is None:
        return NodePlan(node, Outlook.NO_STATUS)
    base = NodePlan(
        node,
        Outlook.UP_TO_DATE,
        current_version=status.current_version,
        target_version=status.target_version,
        preparing_ahead=_preparing_ahead(shadow),
    )
    holds = run.holds.spans(name)
    if name in run.in_flight:
        return replace(base, outlook=Outlook.IN_FLIGHT, finish=run.finishes.get(name), holds=holds)
    start = run.starts.get(name)
    if start is not None:
        return replace(
            base,
            outlook=Outlook.PLANNED,
            order=order[name],
            start=start,
            finish=run.finishes.get(name, later(start, expected)),
            holds=holds,
            finish_by=run.fleet.finish_by(start),
            staged_ahead=name in run.staged_ahead,
        )
    if _offered(run.book, name) or run.book.is_quarantined(name):
        return replace(base, outlook=Outlook.NEVER, holds=holds)
    return base


def _preparing_ahead(shadow: Shadow) -> bool:
    """Asked to prepare its version ahead of its turn, and its host does not hold it yet."""
    asked, status = shadow.spec.prestage_version, shadow.status
    return (
        asked is not None
        and status is not None
        and asked == status.target_version
        and not staged_ahead(status, asked)
    )


def _offered(book: RolloutBook, name: str) -> bool:
    facts = book.facts(name)
    return facts is not None and facts.offered


def _row_key(line: NodePlan) -> tuple[int, float, int, str]:
    moment = line.finish if line.outlook is Outlook.IN_FLIGHT else None
    return (_ROW_ORDER[line.outlook], _timestamp(moment), line.order or 0, line.node)


def _timestamp(moment: datetime | None) -> float:
    return moment.timestamp() if moment is not None else 0.0

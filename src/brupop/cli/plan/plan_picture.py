"""`brupop plan --timeline FILE`: the plan drawn as the simulate and status timelines are.

Each node waits until its expected start, is in its "expected update" (one span: the plan does
not split an update into its phases) and is updated from its expected finish; a node in flight
is in its expected update from the start. A node preparing its version ahead of its turn now
(pre-staging) is drawn "staging ahead" from the start until its turn. The picture itself is the
shared one (`adapters/timeline_picture`).
"""

from __future__ import annotations

from pathlib import Path

from brupop.adapters.timeline_picture import draw_timeline
from brupop.domain.planning.fleet_plan import FleetPlan, Outlook
from brupop.domain.printable import printable
from brupop.domain.reporting.rollout_timeline import Phase, Timeline, Transition, build_timeline


def plan_timeline(plan: FleetPlan) -> Timeline:
    """The plan's rows, in its own order."""
    origin = plan.taken_at
    transitions: list[Transition] = []
    shown = [n for n in plan.nodes if n.outlook is not Outlook.UP_TO_DATE]
    for node in shown:
        name = printable(node.node)
        if node.preparing_ahead and node.outlook is not Outlook.IN_FLIGHT:
            transitions.append(Transition(name, 0.0, Phase.STAGING_AHEAD))
        if node.outlook is Outlook.IN_FLIGHT:
            transitions.append(Transition(name, 0.0, Phase.UPDATING))
        elif node.start is not None:
            transitions.append(
                Transition(name, (node.start - origin).total_seconds(), Phase.UPDATING)
            )
        if node.finish is not None:
            at = (node.finish - origin).total_seconds()
            transitions.append(Transition(name, at, Phase.UPDATED))
    end = (plan.finish - origin).total_seconds() if plan.finish is not None else 0.0
    end = max(end, float(plan.expected_seconds))
    return build_timeline(
        [printable(n.node) for n in shown], transitions, end=end, limit=plan.limit
    )


def draw_plan(plan: FleetPlan, path: Path) -> int:
    """Draw `plan` to `path` (OSError when it cannot be written); the rows drawn."""
    timeline = plan_timeline(plan)
    limit = "unlimited" if plan.limit is None else str(plan.limit)
    title = (
        f"brupop plan: {len(timeline.rows)} nodes, at most {limit} at once, each update "
        f"{plan.expected_seconds} s ({plan.order} order)"
    )
    x_label = f"seconds from {plan.taken_at:%Y-%m-%d %H:%M:%S} UTC (expected)"
    draw_timeline(timeline, path, title, x_label=x_label)
    return len(timeline.rows)

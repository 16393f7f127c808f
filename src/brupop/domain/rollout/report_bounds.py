"""Report bounds: the instants a believable shadow can carry.

An agent writes its own status, and anyone the cluster lets write shadows can write any instant
the CRD admits. A failure stamped after now, or before its Node existed, is not one the node
can have had: the apiserver refuses such a report, and the controller quarantines a shadow that
carries one (written by someone else, or before the apiserver checked) instead of judging it.
Both allow `CLOCK_SKEW` between the clocks of the nodes and the control plane.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from brupop.domain.shadow import Shadow, ShadowStatus
from brupop.domain.timestamps import format_rfc3339, later

CLOCK_SKEW = timedelta(minutes=5)
"""How far a node's clock may run ahead of (or behind) the control plane's."""


def status_problem(
    status: ShadowStatus, now: datetime, *, node_created_at: datetime | None = None
) -> tuple[str, str] | None:
    """(field, why) when `status` claims an instant it cannot have seen at `now`; None when
    believable. `node_created_at`, when known, is the earliest a failure can be."""
    failed_at = status.state_transition_failure_timestamp
    if failed_at is None:
        return None
    field = "state_transition_failure_timestamp"
    if failed_at > later(now, CLOCK_SKEW):
        return field, f"{format_rfc3339(failed_at)} is later than now ({format_rfc3339(now)})"
    if node_created_at is not None and failed_at < later(node_created_at, -CLOCK_SKEW):
        created = format_rfc3339(node_created_at)
        return field, f"{format_rfc3339(failed_at)} is before the Node was created ({created})"
    return None


def shadow_problem(shadow: Shadow, now: datetime) -> str | None:
    """Why `shadow` cannot be judged at `now` (an instant in its status or spec later than
    now); None when it can."""
    stamped = shadow.spec.state_transition_timestamp
    if stamped is not None and stamped > later(now, CLOCK_SKEW):
        return f"spec.state_transition_timestamp {format_rfc3339(stamped)} is later than now"
    problem = status_problem(shadow.status, now) if shadow.status is not None else None
    if problem is not None:
        return f"status.{problem[0]} {problem[1]}"
    return None

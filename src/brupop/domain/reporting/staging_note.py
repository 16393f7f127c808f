"""The staging phase of a node between turns, as `brupop status` adds it to the REASON.

With pre-staging a node prepares its next version while Idle and not in its turn: a phase of its
own, shown after the reason the node waits (`outside_window: ...; 1.20.0 staged ahead`).
"""

from __future__ import annotations

from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState


def with_staging(detail: str, shadow: Shadow) -> str:
    """`detail` followed by the node's staging between turns, its own phase: a version being
    prepared ahead, prepared, or activated and not rebooted into."""
    status, spec = shadow.status, shadow.spec
    if status is None or spec.state is not UpdateState.IDLE:
        return detail
    staged, asked = status.staged_version, spec.prestage_version
    if asked is not None and not (staged == asked and status.staged_state == "Staged"):
        note = f"staging {asked} ahead"
    elif staged is not None and status.staged_state == "Staged":
        note = f"{staged} staged ahead"
    elif staged is not None and status.staged_state == "Ready":
        note = f"{staged} activated, not rebooted"
    else:
        return detail
    return f"{detail}; {note}" if detail else note

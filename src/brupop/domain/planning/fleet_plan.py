"""FleetPlan: what `brupop plan` predicts, node by node, and the same as a JSON object.

Each node has its place in the start order (None when the plan does not start it), its
expected start and finish, every hold it meets on the way with the moments it begins and lifts
(None: it does not lift by itself within the horizon), the PodDisruptionBudgets its drain
would meet, and whether it finishes by the window's close (finishBy).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, NamedTuple

from brupop.domain.reason import Reason


class Outlook(StrEnum):
    """Where a node ends in the plan."""

    PLANNED = "planned"
    """It starts and finishes within the horizon."""
    IN_FLIGHT = "in flight"
    """It is updating now; the plan expects it back at `finish`."""
    NEVER = "never"
    """Something holds it for good (or past the horizon): its last hold says what."""
    UP_TO_DATE = "up to date"
    """It is offered nothing newer than it runs."""
    NO_STATUS = "no status"
    """Its agent has not reported (no shadow, or a shadow with no status)."""


class PlannedHold(NamedTuple):
    """One reason a node waited, from `since` until `until` (None: it had not lifted when the
    plan ended)."""

    reason: Reason
    detail: str
    since: datetime
    until: datetime | None


class FinishBy(NamedTuple):
    """Whether the node's update, started when planned, ends before its window closes and
    before the next blackout; `detail` says why not."""

    met: bool
    detail: str = ""


@dataclass(frozen=True)
class NodePlan:
    """One node's line of the plan."""

    node: str
    outlook: Outlook
    current_version: str = ""
    target_version: str = ""
    order: int | None = None
    start: datetime | None = None
    finish: datetime | None = None
    holds: tuple[PlannedHold, ...] = ()
    drain_blockers: tuple[str, ...] = ()
    finish_by: FinishBy | None = None
    """None: no window or blackout to finish by."""
    staged_ahead: bool = False
    """Its host holds the version prepared ahead: its turn counts only drain, activate and
    reboot."""
    preparing_ahead: bool = False
    """Its host is preparing the version ahead of its turn now (pre-staging)."""

    def as_json(self, origin: datetime) -> dict[str, Any]:
        """The node's entry in `brupop plan --json`; times in RFC 3339 (UTC) and in seconds
        from the plan's start."""
        return {
            "node": self.node,
            "outlook": self.outlook.value,
            "order": self.order,
            "current_version": self.current_version,
            "target_version": self.target_version,
            "start": _instant(self.start),
            "start_seconds": _seconds(self.start, origin),
            "finish": _instant(self.finish),
            "finish_seconds": _seconds(self.finish, origin),
            "holds": [
                {
                    "reason": hold.reason.value,
                    "detail": hold.detail,
                    "since": _instant(hold.since),
                    "until": _instant(hold.until),
                    "until_seconds": _seconds(hold.until, origin),
                }
                for hold in self.holds
            ],
            "drain_blockers": list(self.drain_blockers),
            "finish_by_met": None if self.finish_by is None else self.finish_by.met,
            "finish_by_detail": None if self.finish_by is None else self.finish_by.detail,
            "staged_ahead": self.staged_ahead,
            "preparing_ahead": self.preparing_ahead,
        }


@dataclass(frozen=True)
class FleetPlan:
    """The whole plan: from `taken_at`, each update taking `expected_seconds`, under `limit`
    (None: unlimited); the nodes in the order the controller takes them (those in flight
    first, then by start order, then the ones it never starts, then the rest by name)."""

    taken_at: datetime
    expected_seconds: int
    limit: int | None
    order: str
    policy_source: str
    nodes: tuple[NodePlan, ...]
    notes: tuple[str, ...] = field(default=())
    """Fleet-wide facts a person should read first (a halt, a pause, a hold for every node)."""
    staged_seconds: int | None = None
    """The turn of a node prepared ahead (None: as long as any)."""

    @property
    def finish(self) -> datetime | None:
        """When the last planned node is expected back (None: nothing is planned)."""
        return max((n.finish for n in self.nodes if n.finish is not None), default=None)

    def start_order(self) -> list[str]:
        """The nodes the plan starts, in the order it starts them."""
        started = [n for n in self.nodes if n.order is not None]
        return [n.node for n in sorted(started, key=lambda n: n.order or 0)]

    def as_json(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """`brupop plan --json`: the plan's facts, then every node's entry."""
        origin = self.taken_at
        return {
            "taken_at": _instant(origin),
            "expected_update_seconds": self.expected_seconds,
            "staged_update_seconds": self.staged_seconds,
            "max_concurrent": self.limit,
            "order": self.order,
            "policy": self.policy_source,
            "finish": _instant(self.finish),
            "finish_seconds": _seconds(self.finish, origin),
            "notes": list(self.notes),
            **(extra or {}),
            "nodes": [node.as_json(origin) for node in self.nodes],
        }


def _instant(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def _seconds(moment: datetime | None, origin: datetime) -> float | None:
    return None if moment is None else round((moment - origin).total_seconds(), 3)

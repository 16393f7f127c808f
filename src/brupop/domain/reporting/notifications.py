"""Notifications: what a person hears about a rollout, as plain values.

A `Notification` is one moment worth telling (a rollout started, a node updated or failed, a
drain blocked by a PodDisruptionBudget, the fleet paused, halted or resumed, a rollout finished).
`from_cluster_event` maps the Events the controller already records onto notifications, so the
controller's pass needs no knowledge of them. Pure: the caller supplies the time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from brupop.domain.cluster.objects import ClusterEvent, EventSubject
from brupop.domain.shadow import SHADOW_NAME_PREFIX

SUMMARY_LIMIT = 1000  # characters of a summary (Slack shows about this much)
NAMES_LIMIT = 10  # pods or budgets named in one notification


class NotificationKind(StrEnum):
    """The events a webhook can subscribe to (`events: [...]`)."""

    ROLLOUT_STARTED = "rollout_started"
    NODE_UPDATED = "node_updated"
    NODE_FAILED = "node_failed"
    DRAIN_BLOCKED = "drain_blocked"
    FLEET_PAUSED = "fleet_paused"
    FLEET_HALTED = "fleet_halted"
    FLEET_RESUMED = "fleet_resumed"
    ROLLOUT_FINISHED = "rollout_finished"


@dataclass(frozen=True)
class Notification:
    """One moment of the rollout; the fields that do not apply to its kind stay empty."""

    kind: NotificationKind
    at: datetime
    summary: str
    node: str | None = None
    version: str | None = None
    reason: str | None = None
    pods: tuple[str, ...] = ()
    budgets: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    duration_seconds: float | None = None

    def __post_init__(self) -> None:
        # Bounded here, once, so every format and every receiver gets a bounded message.
        object.__setattr__(self, "summary", self.summary[:SUMMARY_LIMIT])
        object.__setattr__(self, "pods", tuple(self.pods[:NAMES_LIMIT]))
        object.__setattr__(self, "budgets", tuple(self.budgets[:NAMES_LIMIT]))


# Event reasons the controller records (services/controller/writing/rollout_writer.py) and what they
# mean for a notification: (kind, failure reason).
_EVENT_KINDS: Mapping[str, tuple[NotificationKind, str | None]] = {
    "UpdateCompleted": (NotificationKind.NODE_UPDATED, None),
    "UpdateFailed": (NotificationKind.NODE_FAILED, "agent_error"),
    "UpdateTimedOut": (NotificationKind.NODE_FAILED, "timeout"),
    "HealthGateFailed": (NotificationKind.NODE_FAILED, "health_gate"),
    "RebootHookFailed": (NotificationKind.NODE_FAILED, "reboot_hook"),
}
_RUNNING = "Now running "


def node_of_shadow(shadow_name: str) -> str:
    """The node a shadow belongs to (`brs-<node>`)."""
    return shadow_name.removeprefix(SHADOW_NAME_PREFIX)


def from_cluster_event(event: ClusterEvent, at: datetime) -> Notification | None:
    """The notification an Event stands for, or None when it is not one to tell."""
    if event.subject is not EventSubject.SHADOW or event.reason not in _EVENT_KINDS:
        return None
    kind, failure = _EVENT_KINDS[event.reason]
    node = node_of_shadow(event.shadow_name)
    version = None
    if event.message.startswith(_RUNNING):
        version = event.message.removeprefix(_RUNNING).strip() or None
    return Notification(
        kind, at, f"{node}: {event.message}", node=node, version=version, reason=failure
    )


_STARTING = "Starting the update to "


def started_version(event: ClusterEvent) -> str | None:
    """The version of an `UpdateStarted` Event (the controller started a node's update)."""
    if event.subject is not EventSubject.SHADOW or event.reason != "UpdateStarted":
        return None
    version = event.message.removeprefix(_STARTING).strip()
    return version if event.message.startswith(_STARTING) and version else None


def drain_blocked(
    node: str, pods: tuple[str, ...], budgets: tuple[str, ...], at: datetime
) -> Notification:
    """A drain of `node` held by `budgets` that guard `pods`."""
    shown = ", ".join(pods[:3]) + (" ..." if len(pods) > 3 else "")
    guard = ", ".join(budgets) or "a PodDisruptionBudget"
    return Notification(
        NotificationKind.DRAIN_BLOCKED,
        at,
        f"{node}: drain blocked by PodDisruptionBudget {guard} (pods {shown})",
        node=node,
        reason="drain_blocked",
        pods=pods,
        budgets=budgets,
    )

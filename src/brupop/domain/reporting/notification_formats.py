"""The two wire formats of a notification: brupop's versioned JSON and a Slack incoming-webhook
message. Pure: a Notification and the cluster's name in, a JSON-ready dict out.

The JSON format is documented in docs/notifications.md and described by
docs/notification.v1.schema.json; its `schema` field names the version. Fields are added within
a version, never renamed or removed; a breaking change gets a new version.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from brupop.domain.reporting.notifications import Notification, NotificationKind

SCHEMA_V1 = "brupop.bottlerocket.aws/notification/v1"


class NotificationFormat(StrEnum):
    """How a webhook wants its messages."""

    JSON = "json"
    SLACK = "slack"


def as_json_v1(notification: Notification, cluster: str) -> dict[str, Any]:
    """The `json` format: every applicable field, in camelCase, with its schema version."""
    body: dict[str, Any] = {
        "schema": SCHEMA_V1,
        "kind": notification.kind.value,
        "cluster": cluster,
        "time": notification.at.isoformat().replace("+00:00", "Z"),
        "summary": notification.summary,
    }
    optional: dict[str, Any] = {
        "node": notification.node,
        "version": notification.version,
        "reason": notification.reason,
        "durationSeconds": notification.duration_seconds,
    }
    body.update({key: value for key, value in optional.items() if value is not None})
    if notification.kind is NotificationKind.DRAIN_BLOCKED:
        body["pods"] = list(notification.pods)
        body["podDisruptionBudgets"] = list(notification.budgets)
    if notification.counts:
        body["counts"] = dict(notification.counts)
    return body


_MARKS = {
    NotificationKind.ROLLOUT_STARTED: ":rocket:",
    NotificationKind.NODE_UPDATED: ":white_check_mark:",
    NotificationKind.NODE_FAILED: ":x:",
    NotificationKind.DRAIN_BLOCKED: ":no_entry:",
    NotificationKind.FLEET_PAUSED: ":double_vertical_bar:",
    NotificationKind.FLEET_HALTED: ":octagonal_sign:",
    NotificationKind.FLEET_RESUMED: ":arrow_forward:",
    NotificationKind.ROLLOUT_FINISHED: ":checkered_flag:",
}


def as_slack(notification: Notification, cluster: str) -> dict[str, Any]:
    """The `slack` format: one line of text, the cluster's name first."""
    where = f"*{_escape(cluster)}*: " if cluster else ""
    text = f"{_MARKS[notification.kind]} {where}{_escape(notification.summary)}"
    return {"text": text}


def _escape(text: str) -> str:
    """Slack's three control characters in message text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render(form: NotificationFormat, notification: Notification, cluster: str) -> dict[str, Any]:
    """The body sent to a webhook of format `form`."""
    if form is NotificationFormat.SLACK:
        return as_slack(notification, cluster)
    return as_json_v1(notification, cluster)

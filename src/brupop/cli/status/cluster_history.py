"""What a real cluster remembers of a rollout: the shadows and the Events about them, read
through the Kubernetes API with kubectl's configuration.

Events are read in pages and at most MAX_EVENTS of them; an Event that is not about a shadow,
or whose time cannot be read, is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubernetes.client import ApiClient, Configuration, CoreV1Api

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls
from brupop.adapters.kubernetes.resources.shadows import KubernetesShadowRepository
from brupop.domain.shadow import KIND, SHADOW_NAME_PREFIX, Shadow
from brupop.domain.timestamps import TimestampError, parse_rfc3339

MAX_EVENTS = 5000
_PAGE = 500


@dataclass(frozen=True)
class ShadowEvent:
    """One Event about a node's shadow."""

    node: str
    reason: str
    message: str
    at: datetime


@dataclass(frozen=True)
class FleetMoment:
    """A moment of the whole fleet, from the update policy's status (its halt)."""

    at: datetime
    label: str


@dataclass(frozen=True)
class ClusterHistory:
    """The shadows as they are now, the Events the cluster still keeps (about an hour), and
    the fleet's moments."""

    shadows: tuple[Shadow, ...]
    events: tuple[ShadowEvent, ...]
    fleet: tuple[FleetMoment, ...] = ()


def read_history(configuration: Configuration, namespace: str, timeout: float) -> ClusterHistory:
    """The shadows and their Events in `namespace`; PortError when the API refuses."""
    api_client = ApiClient(configuration)
    try:
        calls = ApiCalls(
            api_client, request_timeout_seconds=timeout, connect_timeout_seconds=timeout
        )
        shadows = KubernetesShadowRepository(calls, namespace).list().items
        return ClusterHistory(tuple(shadows), tuple(_events(calls, namespace)))
    finally:
        api_client.close()


def _events(calls: ApiCalls, namespace: str) -> list[ShadowEvent]:
    core = CoreV1Api(calls.api_client)
    found: list[ShadowEvent] = []
    page: dict[str, Any] = {}
    read = 0
    while read < MAX_EVENTS:
        answer = calls.json(
            "list events", core.list_namespaced_event, namespace, limit=_PAGE, **page
        )
        items = (answer.get("items") or [])[: MAX_EVENTS - read]
        read += len(items)
        found.extend(event for raw in items if (event := shadow_event(raw)) is not None)
        token = (answer.get("metadata") or {}).get("continue")
        if not token:
            break
        page = {"_continue": token}
    return found


def shadow_event(raw: JSON) -> ShadowEvent | None:
    """The Event, if it is about a shadow and carries a readable time."""
    involved = raw.get("involvedObject") or {}
    name = str(involved.get("name") or "")
    if involved.get("kind") != KIND or not name.startswith(SHADOW_NAME_PREFIX):
        return None
    meta = raw.get("metadata") or {}
    stamp = (
        raw.get("eventTime")
        or raw.get("firstTimestamp")
        or raw.get("lastTimestamp")
        or meta.get("creationTimestamp")
    )
    try:
        at = parse_rfc3339(str(stamp))
    except TimestampError:
        return None
    return ShadowEvent(
        node=name.removeprefix(SHADOW_NAME_PREFIX),
        reason=str(raw.get("reason") or ""),
        message=str(raw.get("message") or ""),
        at=at,
    )

"""KubernetesEventRecorder: `v1 Event`s about a shadow, so `kubectl describe brs` tells its story,
about the update policy, so `kubectl describe brp` tells the fleet's, or about a Node, so
`kubectl describe node` shows what a drain forced.

`kubectl describe` finds Events by the involved object's kind, name, namespace and uid, so
the recorder looks the object's uid up first. Recording is best effort: a failure
is logged and never raised into the service that reported the moment.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

import structlog
from kubernetes.client import CoreV1Api, CustomObjectsApi

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls
from brupop.adapters.kubernetes.resources import shadow_objects, update_policies
from brupop.domain.cluster.objects import ClusterEvent, EventSubject
from brupop.domain.policy.update_policy import API_VERSION as POLICY_API_VERSION
from brupop.domain.shadow import API_GROUP, API_VERSION_V2
from brupop.ports.errors import PortError

log = structlog.get_logger(__name__)
MESSAGE_LIMIT = 1024  # the apiserver refuses longer Event messages
_NODE_API_VERSION = "v1"
# Per subject: the involved object's apiVersion, and the (version, plural) to look its uid up.
_SUBJECTS = {
    EventSubject.SHADOW: (API_VERSION_V2, shadow_objects.VERSION, shadow_objects.PLURAL),
    EventSubject.UPDATE_POLICY: (
        POLICY_API_VERSION,
        update_policies.VERSION,
        update_policies.PLURAL,
    ),
}


class KubernetesEventRecorder:
    """The EventRecorder port over core `v1 Event`s."""

    def __init__(self, calls: ApiCalls, component: str = "brupop", instance: str = "") -> None:
        self._calls = calls
        self._core = CoreV1Api(calls.api_client)
        self._custom = CustomObjectsApi(calls.api_client)
        self.component = component
        self.instance = instance or component

    def record(self, event: ClusterEvent) -> None:
        try:
            body = self.event_object(event, datetime.now(UTC))
            self._calls.json(
                f"record event {event.reason} on {event.subject} {event.shadow_name!r}",
                self._core.create_namespaced_event,
                event.namespace,
                body,
            )
        except PortError as error:
            log.warning(
                "event.not_recorded",
                shadow=event.shadow_name,
                reason=event.reason,
                error=str(error),
            )

    def event_object(self, event: ClusterEvent, now: datetime) -> JSON:
        """The `v1 Event` posted for `event` at `now`."""
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        node = event.subject is EventSubject.NODE
        involved: JSON = {
            "apiVersion": _NODE_API_VERSION if node else _SUBJECTS[event.subject][0],
            "kind": str(event.subject),
            "name": event.shadow_name,
        }
        if not node:  # a Node has no namespace
            involved["namespace"] = event.namespace
        uid = event.uid or self._uid(event.subject, event.namespace, event.shadow_name)
        if uid:
            involved["uid"] = uid
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                # As client-go's recorder names them: the object, then a unique suffix.
                "name": f"{event.shadow_name}.{int(now.timestamp() * 1e9):x}{secrets.token_hex(2)}",
                "namespace": event.namespace,
            },
            "involvedObject": involved,
            "reason": event.reason,
            "message": event.message[:MESSAGE_LIMIT],
            "type": str(event.type),
            "count": 1,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "reportingInstance": self.instance,
        }

    def _uid(self, subject: EventSubject, namespace: str, name: str) -> str | None:
        """Looked up for every Event whose caller did not give it (a GET each: a rollout's
        writer gives the uid of the shadow it wrote), so a recreated object gets its new uid."""
        try:
            if subject is EventSubject.NODE:
                obj = self._calls.json(f"get node {name!r}", self._core.read_node, name)
            else:
                _, version, plural = _SUBJECTS[subject]
                obj = self._calls.json(
                    f"get {subject} {name!r}",
                    self._custom.get_namespaced_custom_object,
                    API_GROUP,
                    version,
                    namespace,
                    plural,
                    name,
                )
        except PortError:
            return None  # still worth recording: `kubectl get events` shows it
        return str((obj.get("metadata") or {}).get("uid") or "") or None

"""ForcedRemoval: at a drain's timeout under `onTimeout: force`, delete the pods still blocking it
without eviction, but only those in the policy's `forceNamespaces`.

Each forced pod gets a Warning Event on the Node that names it, so `kubectl describe node`
shows what was deleted past its PodDisruptionBudget; pods the policy does not allow to force
stay, and one Event says so (the drain then gives up on them as with `skip`).
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from brupop.domain.cluster.objects import (
    NODE_EVENT_NAMESPACE,
    ClusterEvent,
    EventSubject,
    EventType,
    Pod,
)
from brupop.domain.policy.drain_rules import DrainRules
from brupop.ports.errors import NotFoundError, PortError
from brupop.ports.event_recorder import EventRecorder
from brupop.ports.pod_repository import PodRepository
from brupop.services.apiserver.drain_plan import pod_ref

log = structlog.get_logger(__name__)

FORCED_REASON = "DrainForcedPodDeletion"
NOT_FORCED_REASON = "DrainNotForced"
NAMES_IN_EVENT = 20  # an Event message stays short; the log line has every name


class ForcedRemoval:
    """Deletes a timed-out drain's blocking pods that the rules allow to force."""

    def __init__(self, pods: PodRepository, events: EventRecorder) -> None:
        self._pods = pods
        self._events = events

    def force(
        self, node_name: str, blocking: Sequence[Pod], rules: DrainRules
    ) -> tuple[list[str], list[Pod]]:
        """Delete the forceable pods of `blocking`: (the pods forced, the pods still blocking)."""
        forced: list[str] = []
        left: list[Pod] = []
        for pod in blocking:
            if rules.may_force(pod) and self._delete(node_name, pod, rules):
                forced.append(pod_ref(pod))
            else:
                left.append(pod)
        not_allowed = [pod_ref(pod) for pod in left if not rules.may_force(pod)]
        if not_allowed:
            self._tell_not_forced(node_name, not_allowed, rules)
        return forced, left

    def _delete(self, node_name: str, pod: Pod, rules: DrainRules) -> bool:
        """Delete one pod; True when it is gone or going."""
        try:
            self._pods.delete(pod.namespace, pod.name)
        except NotFoundError:
            return True  # it left on its own meanwhile: nothing was forced, nothing to say
        except PortError as error:
            log.warning("drain.force_failed", node=node_name, pod=pod_ref(pod), error=str(error))
            return False
        log.warning(
            "drain.pod_forced",
            node=node_name,
            pod=pod_ref(pod),
            after=f"{rules.timeout_seconds:g}s",
        )
        self._events.record(
            ClusterEvent(
                node_name,
                NODE_EVENT_NAMESPACE,
                FORCED_REASON,
                f"Deleted pod {pod_ref(pod)} without eviction: the drain was still blocked after "
                f"{rules.timeout_seconds:g}s and the update policy forces namespace "
                f"{pod.namespace} (drain.onTimeout: force)",
                EventType.WARNING,
                EventSubject.NODE,
            )
        )
        return True

    def _tell_not_forced(self, node_name: str, pods: list[str], rules: DrainRules) -> None:
        if rules.force_namespaces:
            why = "not in drain.forceNamespaces " + ", ".join(sorted(rules.force_namespaces))
        else:
            why = "drain.forceNamespaces lists no namespace, so nothing is forced"
        log.warning("drain.not_forced", node=node_name, pods=pods, reason=why)
        shown = ", ".join(pods[:NAMES_IN_EVENT])
        more = f" and {len(pods) - NAMES_IN_EVENT} more" if len(pods) > NAMES_IN_EVENT else ""
        self._events.record(
            ClusterEvent(
                node_name,
                NODE_EVENT_NAMESPACE,
                NOT_FORCED_REASON,
                f"Drain timed out after {rules.timeout_seconds:g}s; pods left on the node ({why}): "
                f"{shown}{more}",
                EventType.WARNING,
                EventSubject.NODE,
            )
        )

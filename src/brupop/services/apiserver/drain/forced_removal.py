"""ForcedRemoval: at a drain's timeout under `onTimeout: force`, delete the pods still blocking it
without eviction, but only those in the policy's `forceNamespaces` that are not protected.

Each forced pod gets a Warning Event on the Node that names it, so `kubectl describe node`
shows what was deleted past its PodDisruptionBudget; pods the rules do not allow to force
stay, and one Event says why (the drain then gives up on them as with `skip`).
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
from brupop.domain.policy.drain_rules import FORCE_ALLOWANCE_SETTING, DrainRules
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import NotFoundError, PortError
from brupop.services.apiserver.drain.plan import pod_ref

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
        not_allowed = [pod for pod in left if not rules.may_force(pod)]
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

    def _tell_not_forced(self, node_name: str, pods: list[Pod], rules: DrainRules) -> None:
        groups: dict[str, list[str]] = {}  # why -> the pods left for that reason
        for pod in pods:
            groups.setdefault(_not_forced_because(pod, rules), []).append(pod_ref(pod))
        log.warning(
            "drain.not_forced",
            node=node_name,
            pods=[pod_ref(pod) for pod in pods],
            reason="; ".join(groups),
        )
        told = "; ".join(f"{_shown(refs)} ({why})" for why, refs in groups.items())
        self._events.record(
            ClusterEvent(
                node_name,
                NODE_EVENT_NAMESPACE,
                NOT_FORCED_REASON,
                f"Drain timed out after {rules.timeout_seconds:g}s; pods left on the node: {told}",
                EventType.WARNING,
                EventSubject.NODE,
            )
        )


def _not_forced_because(pod: Pod, rules: DrainRules) -> str:
    """Why the rules leave `pod` (one the drain could not evict) on the node."""
    if pod.namespace in rules.refused_namespaces:
        return (
            f"namespace {pod.namespace} is the cluster's or brupop's own: never forced unless "
            f"the apiserver's {FORCE_ALLOWANCE_SETTING} lists it"
        )
    if rules.force_namespaces:
        return "not in drain.forceNamespaces " + ", ".join(sorted(rules.force_namespaces))
    return "drain.forceNamespaces lists no namespace, so nothing is forced"


def _shown(refs: list[str]) -> str:
    """At most NAMES_IN_EVENT pod names, and how many more."""
    more = f" and {len(refs) - NAMES_IN_EVENT} more" if len(refs) > NAMES_IN_EVENT else ""
    return ", ".join(refs[:NAMES_IN_EVENT]) + more

"""InMemoryAgentPods: the agent pods of one namespace of the in-memory cluster, listed and
watched from its pod store (the AgentPodSource port)."""

from __future__ import annotations

from collections.abc import Iterator

from brupop.adapters.memory.store import VersionedStore
from brupop.domain.cluster.objects import (
    COMPONENT_LABEL,
    Listing,
    Pod,
    WatchBookmark,
    WatchEvent,
)


class InMemoryAgentPods:
    """Pods of `namespace` labelled as brupop's agent."""

    def __init__(self, pods: VersionedStore[Pod], namespace: str) -> None:
        self._pods = pods
        self._namespace = namespace

    def _is_agent(self, pod: Pod) -> bool:
        return pod.namespace == self._namespace and pod.labels.get(COMPONENT_LABEL) == "agent"

    def list(self) -> Listing[Pod]:
        return self._pods.list(self._is_agent)

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Pod] | WatchBookmark]:
        return self._pods.watch(resource_version, timeout_seconds, self._is_agent)

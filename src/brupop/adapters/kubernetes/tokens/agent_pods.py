"""KubernetesAgentPods: brupop's agent pods (by label, in brupop's namespace), listed and
watched through the shared list-then-watch machinery, for the apiserver's pod mirror."""

from __future__ import annotations

from collections.abc import Iterator

from kubernetes.client import CoreV1Api

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.api.watching import LIST_PAGE_SIZE, WatchSource, list_items, watch
from brupop.adapters.kubernetes.resources.pods import pod_from_object
from brupop.domain.cluster.objects import (
    COMPONENT_LABEL,
    Listing,
    Pod,
    WatchBookmark,
    WatchEvent,
)

AGENT_SELECTOR = f"{COMPONENT_LABEL}=agent"


class KubernetesAgentPods:
    """The AgentPodSource port over `v1 Pod`."""

    def __init__(self, calls: ApiCalls, namespace: str, selector: str = AGENT_SELECTOR) -> None:
        self._calls = calls
        self._source = WatchSource(
            f"watch agent pods in {namespace}",
            CoreV1Api(calls.api_client).list_namespaced_pod,
            pod_from_object,
            args=(namespace,),
            params=(("label_selector", selector),),
        )

    def list(self) -> Listing[Pod]:
        items, version = list_items(self._calls, self._source, LIST_PAGE_SIZE)
        return Listing(tuple(pod for pod, _ in items), version or None)

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Pod] | WatchBookmark]:
        return watch(self._calls, self._source, resource_version, timeout_seconds)

"""KubernetesAgentPods: brupop's agent pods (by label, in brupop's namespace), listed and
watched through the shared list-then-watch machinery, for the apiserver's pod mirror.

Each replica mirrors every agent pod, so a pod here is read only for what token binding checks
(`agent_pod_from_object`): a whole decoded pod is several times larger.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from kubernetes.client import CoreV1Api

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls
from brupop.adapters.kubernetes.api.decoding import mapping, reads, text_or_none
from brupop.adapters.kubernetes.api.watching import LIST_PAGE_SIZE, WatchSource, list_items, watch
from brupop.adapters.kubernetes.resources.pods import deletion_timestamp_of
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
            agent_pod_from_object,
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


@reads("Pod")
def agent_pod_from_object(obj: JSON) -> Pod:
    """An agent pod with what token binding reads (name, namespace, UID, node, ServiceAccount,
    component label, deletion); its other fields are left at their defaults."""
    meta = mapping(obj.get("metadata"))
    spec = mapping(obj.get("spec"))
    labels = mapping(meta.get("labels"))
    component = labels.get(COMPONENT_LABEL)
    account = text_or_none(spec.get("serviceAccountName"))
    return Pod(
        name=str(meta.get("name") or ""),
        namespace=sys.intern(str(meta.get("namespace") or "")),
        uid=str(meta.get("uid") or ""),
        node_name=text_or_none(spec.get("nodeName")),
        labels=_component_labels(component if isinstance(component, str) else None),
        service_account=sys.intern(account) if account is not None else None,
        terminating=bool(meta.get("deletionTimestamp")),
        deletion_timestamp=deletion_timestamp_of(meta),
    )


@functools.lru_cache(maxsize=8)
def _component_labels(component: str | None) -> Mapping[str, str]:
    """One read-only label map per component, shared by every pod that has it."""
    return MappingProxyType({} if component is None else {COMPONENT_LABEL: component})

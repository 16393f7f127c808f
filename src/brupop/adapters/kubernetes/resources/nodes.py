"""KubernetesNodeRepository: read Nodes, cordon and uncordon them, change labels and annotations.

Every change is a JSON merge patch of just the fields it sets (null removes a label), like
`kubectl cordon` / `kubectl label`, so it never overwrites what others changed meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kubernetes.client import CoreV1Api

from brupop.adapters.kubernetes.api import watching
from brupop.adapters.kubernetes.api.calls import JSON, MERGE_PATCH, ApiCalls
from brupop.adapters.kubernetes.api.decoding import (
    entries,
    mapping,
    reads,
    skipping,
    text_map,
    text_or_none,
)
from brupop.adapters.kubernetes.resources.scheduling_fields import (
    allocatable_of,
    taints_of,
    timestamp_of,
)
from brupop.domain.cluster.objects import Listing, Node, VersionListing, WatchBookmark, WatchEvent


@reads("Node")
def node_from_object(obj: JSON) -> Node:
    """The domain Node of a `v1 Node` object."""
    meta = mapping(obj.get("metadata"))
    status = mapping(obj.get("status"))
    spec = mapping(obj.get("spec"))
    return Node(
        name=str(meta.get("name") or ""),
        uid=str(meta.get("uid") or ""),
        labels=text_map(meta.get("labels")),
        annotations=text_map(meta.get("annotations")),
        unschedulable=spec.get("unschedulable") is True,
        resource_version=text_or_none(meta.get("resourceVersion")),
        ready=condition_true(status, "Ready"),
        internal_ip=_internal_ip(status),
        taints=taints_of(spec),
        created_at=timestamp_of(meta, "creationTimestamp"),
        deleting=bool(meta.get("deletionTimestamp")),
        allocatable=allocatable_of(status),
    )


NODES_PATH = "/api/v1/nodes"

_readable_or_none = skipping(node_from_object)
"""Lists and watches leave out a Node they cannot read (logged), rather than fail."""


def condition_true(status: JSON, kind: str) -> bool:
    """The object's condition `kind` is "True" (absent or Unknown counts as not)."""
    return any(
        c.get("type") == kind and c.get("status") == "True"
        for c in entries(status.get("conditions"))
    )


def _internal_ip(status: JSON) -> str | None:
    for address in entries(status.get("addresses")):
        if address.get("type") == "InternalIP":
            return text_or_none(address.get("address"))
    return None


def selector_text(labels: Mapping[str, str] | None) -> str | None:
    """`a=b,c=d` for the API's labelSelector parameter; None selects everything."""
    if not labels:
        return None
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


class KubernetesNodeRepository:
    """The NodeRepository port over `v1 Node`."""

    def __init__(self, calls: ApiCalls) -> None:
        self._calls = calls
        self._api = CoreV1Api(calls.api_client)

    def get(self, name: str) -> Node:
        return node_from_object(self._calls.json(f"get node {name!r}", self._api.read_node, name))

    def list(self, label_selector: Mapping[str, str] | None = None) -> Listing[Node]:
        source = self._source("list nodes", label_selector)
        items, version = watching.list_items(self._calls, source, watching.LIST_PAGE_SIZE)
        return Listing(items=tuple(node for node, _ in items), resource_version=version or None)

    def list_versions(self, label_selector: Mapping[str, str] | None = None) -> VersionListing:
        source = self._source("list nodes", label_selector)
        return watching.list_versions(self._calls, source, NODES_PATH, watching.LIST_PAGE_SIZE)

    def watch(
        self,
        resource_version: str | None,
        timeout_seconds: float,
        label_selector: Mapping[str, str] | None = None,
    ) -> Iterator[WatchEvent[Node] | WatchBookmark]:
        source = self._source("watch nodes", label_selector)
        return watching.watch(self._calls, source, resource_version, timeout_seconds)

    def _source(
        self, action: str, label_selector: Mapping[str, str] | None
    ) -> watching.WatchSource[Node]:
        """The Nodes `label_selector` selects (all without one), listed or watched."""
        selector = selector_text(label_selector)
        params = (("label_selector", selector),) if selector else ()
        return watching.WatchSource(action, self._api.list_node, _readable_or_none, (), params)

    def set_unschedulable(
        self,
        name: str,
        unschedulable: bool,
        *,
        annotations: Mapping[str, str | None] | None = None,
    ) -> Node:
        # Like kubectl: cordon sets the flag, uncordon removes it; the marks go in the same patch.
        body: dict[str, JSON] = {"spec": {"unschedulable": True if unschedulable else None}}
        if annotations:
            body["metadata"] = {"annotations": dict(annotations)}
        action = f"{'cordon' if unschedulable else 'uncordon'} node {name!r}"
        return self._patch(action, name, body)

    def set_labels(
        self,
        name: str,
        labels: Mapping[str, str | None],
        *,
        annotations: Mapping[str, str | None] | None = None,
    ) -> Node:
        metadata: dict[str, JSON] = {"labels": dict(labels)}
        if annotations:
            metadata["annotations"] = dict(annotations)
        return self._patch(f"label node {name!r}", name, {"metadata": metadata})

    def set_annotations(
        self,
        name: str,
        annotations: Mapping[str, str | None],
        *,
        resource_version: str | None = None,
    ) -> Node:
        metadata: JSON = {"annotations": dict(annotations)}
        if resource_version is not None:  # the apiserver answers 409 if the Node moved on
            metadata["resourceVersion"] = resource_version
        body = {"metadata": metadata}
        return self._patch(f"annotate node {name!r}", name, body)

    def _patch(self, action: str, name: str, body: JSON) -> Node:
        patched = self._calls.json(
            action, self._api.patch_node, name, body, _content_type=MERGE_PATCH
        )
        return node_from_object(patched)

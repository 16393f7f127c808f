"""NodeRepository: read Nodes and make the few changes brupop makes to them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from brupop.domain.cluster.objects import Listing, Node, VersionListing, WatchBookmark, WatchEvent


class NodeRepository(Protocol):
    """Nodes: get, list by label, watch, cordon state, labels and annotations."""

    def get(self, name: str) -> Node:
        """The Node `name`; NotFoundError when absent."""
        ...

    def list(self, label_selector: Mapping[str, str] | None = None) -> Listing[Node]:
        """Nodes carrying every label in `label_selector` (all when None)."""
        ...

    def list_versions(self, label_selector: Mapping[str, str] | None = None) -> VersionListing:
        """The name and resourceVersion of every Node `list` would give."""
        ...

    def watch(
        self,
        resource_version: str | None,
        timeout_seconds: float,
        label_selector: Mapping[str, str] | None = None,
    ) -> Iterator[WatchEvent[Node] | WatchBookmark]:
        """Node changes after `resource_version`; WatchExpiredError when too old. With
        `label_selector`, only matching Nodes are seen, and a Node that stops matching is seen
        as DELETED (as the Kubernetes API does); a DELETED for a Node the caller never saw may
        come too, so a consumer treats it as "gone, if known"."""
        ...

    def set_unschedulable(
        self,
        name: str,
        unschedulable: bool,
        *,
        annotations: Mapping[str, str | None] | None = None,
    ) -> Node:
        """Cordon (True) or uncordon (False), changing `annotations` in the same write (so a
        mark of who cordoned never drifts apart from the cordon)."""
        ...

    def set_labels(
        self,
        name: str,
        labels: Mapping[str, str | None],
        *,
        annotations: Mapping[str, str | None] | None = None,
    ) -> Node:
        """Add or change labels, and `annotations` in the same write; None removes one."""
        ...

    def set_annotations(
        self,
        name: str,
        annotations: Mapping[str, str | None],
        *,
        resource_version: str | None = None,
    ) -> Node:
        """Add or change annotations; a None value removes that annotation. Given
        `resource_version`, only if the Node is still at it (else ConflictError)."""
        ...

"""InMemoryNodeRepository: Nodes with labels, annotations and the unschedulable flag."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping

from brupop.adapters.memory.store import Revisions, VersionedStore
from brupop.domain.cluster.objects import Listing, Node, VersionListing, WatchEvent, WatchEventType


class InMemoryNodeRepository:
    """The NodeRepository port over a VersionedStore."""

    def __init__(self, revisions: Revisions) -> None:
        self.store: VersionedStore[Node] = VersionedStore(
            revisions,
            "node",
            with_version=lambda n, rv: dataclasses.replace(n, resource_version=rv),
            version_of=lambda n: n.resource_version,
            labels_of=lambda n: n.labels,
        )
        self.on_schedulable: Callable[[str], None] = lambda _name: None

    def get(self, name: str) -> Node:
        return self.store.get(name)

    def list(self, label_selector: Mapping[str, str] | None = None) -> Listing[Node]:
        return self.store.list(_selected_by(label_selector))

    def list_versions(self, label_selector: Mapping[str, str] | None = None) -> VersionListing:
        if not label_selector:
            return self.store.list_versions()
        first, *more = label_selector.items()
        with self.store.lock:
            listing = self.store.list_versions(first)
            if not more:
                return listing
            matches = _selected_by(label_selector)
            versions = {
                name: version
                for name, version in listing.versions.items()
                if (node := self.store.find(name)) is not None and matches(node)
            }
            return VersionListing(versions, listing.resource_version)

    def watch(
        self,
        resource_version: str | None,
        timeout_seconds: float,
        label_selector: Mapping[str, str] | None = None,
    ) -> Iterator[WatchEvent[Node]]:
        events = self.store.watch(resource_version, timeout_seconds)
        if not label_selector:
            return events
        return _selected(events, dict(label_selector))

    def set_unschedulable(
        self,
        name: str,
        unschedulable: bool,
        *,
        annotations: Mapping[str, str | None] | None = None,
    ) -> Node:
        marks = annotations or {}
        node = self.store.update(
            name,
            lambda n: dataclasses.replace(
                n, unschedulable=unschedulable, annotations=_merged(n.annotations, marks)
            ),
        )
        if not unschedulable:
            self.on_schedulable(name)
        return node

    def set_labels(
        self,
        name: str,
        labels: Mapping[str, str | None],
        *,
        annotations: Mapping[str, str | None] | None = None,
    ) -> Node:
        marks = annotations or {}
        return self.store.update(
            name,
            lambda n: dataclasses.replace(
                n, labels=_merged(n.labels, labels), annotations=_merged(n.annotations, marks)
            ),
        )

    def set_annotations(
        self,
        name: str,
        annotations: Mapping[str, str | None],
        *,
        resource_version: str | None = None,
    ) -> Node:
        with self.store.lock:
            current = self.store.get(name)
            changed = dataclasses.replace(
                current, annotations=_merged(current.annotations, annotations)
            )
            return self.store.replace(name, changed, expected_version=resource_version)


def _selected(
    events: Iterator[WatchEvent[Node]], wanted: Mapping[str, str]
) -> Iterator[WatchEvent[Node]]:
    """Only the Nodes that match; a change that makes a Node stop matching is a DELETED."""
    for event in events:
        if all(event.object.labels.get(k) == v for k, v in wanted.items()):
            yield event
        elif event.type is not WatchEventType.ADDED:
            yield WatchEvent(WatchEventType.DELETED, event.object, event.resource_version)


def _merged(current: Mapping[str, str], change: Mapping[str, str | None]) -> dict[str, str]:
    merged = dict(current)
    for key, value in change.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def _selected_by(label_selector: Mapping[str, str] | None) -> Callable[[Node], bool]:
    """Whether a Node carries every label of `label_selector`."""
    wanted = tuple((label_selector or {}).items())

    def matches(node: Node) -> bool:
        # A plain loop: a generator per Node costs more than the match at 10k Nodes.
        labels = node.labels
        for key, value in wanted:  # noqa: SIM110
            if labels.get(key) != value:
                return False
        return True

    return matches

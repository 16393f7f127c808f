"""InMemoryShadowRepository: BottlerocketShadows with resourceVersions and stale-write conflicts."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from brupop.adapters.memory.store import Revisions, VersionedStore
from brupop.domain.cluster.objects import Listing, VersionListing, WatchEvent
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus, shadow_name


class InMemoryShadowRepository:
    """The ShadowRepository port over a VersionedStore."""

    def __init__(self, revisions: Revisions, namespace: str) -> None:
        self.namespace = namespace
        self.store: VersionedStore[Shadow] = VersionedStore(
            revisions,
            "bottlerocketshadow",
            with_version=lambda s, rv: s.model_copy(update={"resource_version": rv}),
            version_of=lambda s: s.resource_version,
        )

    def get(self, name: str) -> Shadow:
        return self.store.get(name)

    def list(self) -> Listing[Shadow]:
        return self.store.list()

    def list_versions(self) -> VersionListing:
        return self.store.list_versions()

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Shadow]]:
        return self.store.watch(resource_version, timeout_seconds)

    def create(self, node_name: str, node_uid: str) -> Shadow:
        name = shadow_name(node_name)
        shadow = Shadow(
            name=name,
            namespace=self.namespace,
            node_name=node_name,
            node_uid=node_uid,
            uid=str(uuid.uuid4()),
        )
        return self.store.create(name, shadow)

    def replace_spec(self, name: str, spec: ShadowSpec, resource_version: str | None) -> Shadow:
        with self.store.lock:
            current = self.store.get(name)
            return self.store.replace(
                name, current.model_copy(update={"spec": spec}), expected_version=resource_version
            )

    def update_status(
        self, name: str, status: ShadowStatus, resource_version: str | None = None
    ) -> Shadow:
        with self.store.lock:
            current = self.store.get(name)
            return self.store.replace(
                name,
                current.model_copy(update={"status": status}),
                expected_version=resource_version,
            )

    def delete(self, name: str) -> None:
        self.store.delete(name)

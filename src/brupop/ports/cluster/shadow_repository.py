"""ShadowRepository: every shadow in brupop's namespace, for the controller and the apiserver."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from brupop.domain.cluster.objects import Listing, VersionListing, WatchBookmark, WatchEvent
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus


class ShadowRepository(Protocol):
    """Shadows with resourceVersions: stale writes raise ConflictError."""

    def get(self, name: str) -> Shadow:
        """The shadow `name`; NotFoundError when absent."""
        ...

    def list(self) -> Listing[Shadow]:
        """All shadows and the resourceVersion to watch from."""
        ...

    def list_versions(self) -> VersionListing:
        """The name and resourceVersion of every shadow `list` would give (the same
        snapshot rules), and the resourceVersion to watch from."""
        ...

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Shadow] | WatchBookmark]:
        """Changes after `resource_version`, until `timeout_seconds` pass.
        WatchExpiredError when that version is too old: re-list."""
        ...

    def create(self, node_name: str, node_uid: str) -> Shadow:
        """Create `brs-<node_name>` owned by that Node, spec Idle; AlreadyExistsError if present."""
        ...

    def replace_spec(self, name: str, spec: ShadowSpec, resource_version: str | None) -> Shadow:
        """Write the spec if the shadow is still at `resource_version` (None: unconditionally)."""
        ...

    def update_status(
        self, name: str, status: ShadowStatus, resource_version: str | None = None
    ) -> Shadow:
        """Write the status subresource; with `resource_version`, only if the shadow is still
        at it (ConflictError otherwise), so a status computed from a read cannot revert what
        another writer stored since."""
        ...

    def delete(self, name: str) -> None:
        """Delete the shadow; NotFoundError when absent."""
        ...

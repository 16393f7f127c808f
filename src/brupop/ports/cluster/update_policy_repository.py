"""UpdatePolicyRepository: the BottlerocketUpdatePolicy objects of brupop's namespace: the
controller reads and watches them and writes the status of the one that counts (`default`);
`brupop pause` and `brupop resume` create it and change its `paused` field and its halt.

Writes that a concurrent writer could undo carry the resourceVersion they were computed from,
so a write based on a stale read fails with ConflictError instead of silently winning.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from brupop.domain.cluster.objects import WatchBookmark, WatchEvent
from brupop.domain.policy.policy_object import PolicySnapshot, UpdatePolicy
from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus


class UpdatePolicyRepository(Protocol):
    """Policy objects with resourceVersions; a spec that cannot be read arrives as `spec=None`
    with its reason, never as an error."""

    def read(self) -> PolicySnapshot:
        """The `default` policy (None when absent), the names of the other policy objects of
        the namespace (ignored, for a warning), and the resourceVersion to watch from."""
        ...

    def get(self) -> UpdatePolicy:
        """The `default` policy; NotFoundError when it is absent."""
        ...

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[UpdatePolicy] | WatchBookmark]:
        """Changes to any policy object of the namespace after `resource_version` (None: every
        object as ADDED first), until `timeout_seconds` pass. WatchExpiredError when that
        version is too old: read again."""
        ...

    def create(self, spec: UpdatePolicySpec, pause_created: bool = False) -> UpdatePolicy:
        """Create `default` with `spec`; only `paused` and the fields that differ from their
        defaults are written, and with `pause_created` the annotation that says `brupop pause`
        made it. AlreadyExistsError when it exists."""
        ...

    def delete_default(self, resource_version: str) -> None:
        """Delete `default`. ConflictError when it changed since `resource_version`;
        NotFoundError when it is absent."""
        ...

    def set_paused(self, paused: bool, resource_version: str) -> UpdatePolicy:
        """Set `spec.paused` of `default` and leave every other field as it is. ConflictError
        when the object changed since `resource_version`; NotFoundError when it is absent."""
        ...

    def update_status(
        self, status: UpdatePolicyStatus, resource_version: str | None = None
    ) -> UpdatePolicy:
        """Write the status subresource of `default`; NotFoundError when it is absent.
        Fields set to None are removed. With `resource_version`, ConflictError when the object
        changed since (a resume and a halt must not overwrite each other unseen)."""
        ...

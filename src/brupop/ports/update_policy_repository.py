"""UpdatePolicyRepository: the BottlerocketUpdatePolicy objects of brupop's namespace, for the
controller: read and watch them, and write the status of the one that counts (`default`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from brupop.domain.cluster import WatchEvent
from brupop.domain.policy_object import PolicySnapshot, UpdatePolicy
from brupop.domain.update_policy_status import UpdatePolicyStatus


class UpdatePolicyRepository(Protocol):
    """Policy objects with resourceVersions; a spec that cannot be read arrives as `spec=None`
    with its reason, never as an error."""

    def read(self) -> PolicySnapshot:
        """The `default` policy (None when absent), the names of the other policy objects of
        the namespace (ignored, for a warning), and the resourceVersion to watch from."""
        ...

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[UpdatePolicy]]:
        """Changes to any policy object of the namespace after `resource_version` (None: every
        object as ADDED first), until `timeout_seconds` pass. WatchExpiredError when that
        version is too old: read again."""
        ...

    def update_status(self, status: UpdatePolicyStatus) -> UpdatePolicy:
        """Write the status subresource of `default`; NotFoundError when it is absent.
        Fields set to None are removed."""
        ...

"""InMemoryUpdatePolicyRepository: BottlerocketUpdatePolicy objects, as `kubectl apply` leaves
them: a spec change bumps `generation`; the status is the controller's, kept across applies."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from brupop.adapters.memory.store import Revisions, VersionedStore
from brupop.domain.cluster.objects import WatchEvent
from brupop.domain.policy.policy_object import (
    PolicySnapshot,
    UpdatePolicy,
    policy_from_object,
    policy_snapshot,
)
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME, UpdatePolicySpec
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.ports.errors import ConflictError


class InMemoryUpdatePolicyRepository:
    """The UpdatePolicyRepository port over a VersionedStore; objects of other namespaces can
    be applied (as in a real cluster) and are never seen through the port."""

    def __init__(self, revisions: Revisions, namespace: str) -> None:
        self.namespace = namespace
        self.store: VersionedStore[UpdatePolicy] = VersionedStore(
            revisions,
            "bottlerocketupdatepolicy",
            with_version=lambda p, rv: dataclasses.replace(p, resource_version=rv),
            version_of=lambda p: p.resource_version,
        )

    # --- the port ---------------------------------------------------------------------------

    def read(self) -> PolicySnapshot:
        listing = self.store.list(self._ours)
        return policy_snapshot(listing.items, listing.resource_version)

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[UpdatePolicy]]:
        return self.store.watch(resource_version, timeout_seconds, self._ours)

    def get(self) -> UpdatePolicy:
        return self.store.get(_key(self.namespace, DEFAULT_POLICY_NAME))

    def create(self, spec: UpdatePolicySpec, pause_created: bool = False) -> UpdatePolicy:
        created = UpdatePolicy(
            name=DEFAULT_POLICY_NAME,
            namespace=self.namespace,
            spec=spec,
            generation=1,
            uid=str(uuid.uuid4()),
            pause_created=pause_created,
        )
        return self.store.create(_key(self.namespace, DEFAULT_POLICY_NAME), created)

    def delete_default(self, resource_version: str) -> None:
        key = _key(self.namespace, DEFAULT_POLICY_NAME)
        with self.store.lock:
            if self.store.get(key).resource_version != resource_version:
                raise ConflictError(f"update policy {DEFAULT_POLICY_NAME!r} changed meanwhile")
            self.store.delete(key)

    def set_paused(self, paused: bool, resource_version: str) -> UpdatePolicy:
        key = _key(self.namespace, DEFAULT_POLICY_NAME)
        with self.store.lock:
            current = self.store.get(key)
            if current.spec is None:
                # The unreadable spec is not kept here (only its reason), so there is nothing
                # to set `paused` in: the object stays as unreadable as it was.
                return self.store.replace(key, current, resource_version)
            spec = current.spec.model_copy(update={"paused": paused})
            generation = (current.generation or 0) + (spec != current.spec)
            changed = dataclasses.replace(current, spec=spec, generation=generation)
            return self.store.replace(key, changed, resource_version)

    def update_status(
        self, status: UpdatePolicyStatus, resource_version: str | None = None
    ) -> UpdatePolicy:
        key = _key(self.namespace, DEFAULT_POLICY_NAME)
        with self.store.lock:
            current = self.store.get(key)
            return self.store.replace(
                key, dataclasses.replace(current, status=status), resource_version
            )

    # --- setup: what a person does with kubectl ---------------------------------------------

    def apply(self, obj: Mapping[str, Any]) -> UpdatePolicy:
        """Create or change a policy from its wire object (namespace: brupop's by default)."""
        read = policy_from_object(obj)
        namespace = read.namespace or self.namespace
        key = _key(namespace, read.name)
        with self.store.lock:
            current = self.store.find(key)
            if current is None:
                created = dataclasses.replace(
                    read, namespace=namespace, generation=1, uid=str(uuid.uuid4()), status=None
                )
                return self.store.create(key, created)
            changed = (current.spec, current.problem) != (read.spec, read.problem)
            generation = (current.generation or 0) + (1 if changed else 0)
            updated = dataclasses.replace(
                current,
                spec=read.spec,
                problem=read.problem,
                generation=generation,
                pause_created=read.pause_created,
            )
            return self.store.replace(key, updated)

    def delete(self, name: str, namespace: str | None = None) -> None:
        """Delete a policy; NotFoundError when absent."""
        self.store.delete(_key(namespace or self.namespace, name))

    def _ours(self, policy: UpdatePolicy) -> bool:
        return policy.namespace == self.namespace


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"

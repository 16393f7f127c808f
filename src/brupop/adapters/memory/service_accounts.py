"""InMemoryServiceAccounts: the ServiceAccounts of the in-memory cluster, kept by
`namespace/name`, and those of brupop's namespace listed and watched (ServiceAccountSource)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from brupop.adapters.memory.store import Revisions, VersionedStore
from brupop.domain.cluster.objects import Listing, ServiceAccount, WatchBookmark, WatchEvent


def account_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


class InMemoryServiceAccounts:
    """The ServiceAccountSource port over brupop's namespace, plus the setup calls."""

    def __init__(self, revisions: Revisions, namespace: str) -> None:
        self._namespace = namespace
        self.store: VersionedStore[ServiceAccount] = VersionedStore(
            revisions, "serviceaccount", with_version=lambda a, _rv: a, version_of=lambda _a: None
        )

    def _ours(self, account: ServiceAccount) -> bool:
        return account.namespace == self._namespace

    def list(self) -> Listing[ServiceAccount]:
        return self.store.list(self._ours)

    def get(self, name: str) -> ServiceAccount:
        return self.store.get(account_key(self._namespace, name))

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[ServiceAccount] | WatchBookmark]:
        return self.store.watch(resource_version, timeout_seconds, self._ours)

    # --- setup: what an administrator (or kube-apiserver's admission) would do -----------

    def add(self, namespace: str, name: str) -> ServiceAccount:
        """A new ServiceAccount with a fresh UID."""
        account = ServiceAccount(name=name, namespace=namespace, uid=str(uuid.uuid4()))
        return self.store.create(account_key(namespace, name), account)

    def ensure(self, namespace: str, name: str) -> ServiceAccount:
        """The ServiceAccount of that name, made when missing."""
        with self.store.lock:
            found = self.store.find(account_key(namespace, name))
            return found if found is not None else self.add(namespace, name)

    def remove(self, namespace: str, name: str) -> None:
        self.store.delete(account_key(namespace, name))

    def find(self, namespace: str, name: str) -> ServiceAccount | None:
        return self.store.find(account_key(namespace, name))

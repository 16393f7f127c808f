"""KubernetesServiceAccounts: the ServiceAccounts of brupop's namespace, listed and watched
through the shared list-then-watch machinery, for local token verification."""

from __future__ import annotations

from collections.abc import Iterator

from kubernetes.client import CoreV1Api

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls
from brupop.adapters.kubernetes.api.decoding import mapping, reads, skipping
from brupop.adapters.kubernetes.api.watching import LIST_PAGE_SIZE, WatchSource, list_items, watch
from brupop.adapters.kubernetes.resources.pods import deletion_timestamp_of
from brupop.domain.cluster.objects import Listing, ServiceAccount, WatchBookmark, WatchEvent


@reads("ServiceAccount")
def service_account_from_object(obj: JSON) -> ServiceAccount:
    """The domain ServiceAccount of a `v1 ServiceAccount` object."""
    meta = mapping(obj.get("metadata"))
    return ServiceAccount(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        uid=str(meta.get("uid") or ""),
        deletion_timestamp=deletion_timestamp_of(meta),
    )


class KubernetesServiceAccounts:
    """The ServiceAccountSource port over `v1 ServiceAccount`."""

    def __init__(self, calls: ApiCalls, namespace: str) -> None:
        self._calls = calls
        self._namespace = namespace
        self._core = CoreV1Api(calls.api_client)
        self._source = WatchSource(
            f"watch service accounts in {namespace}",
            self._core.list_namespaced_service_account,
            skipping(service_account_from_object),
            args=(namespace,),
        )

    def list(self) -> Listing[ServiceAccount]:
        items, version = list_items(self._calls, self._source, LIST_PAGE_SIZE)
        return Listing(tuple(account for account, _ in items), version or None)

    def get(self, name: str) -> ServiceAccount:
        obj = self._calls.json(
            f"get service account {self._namespace}/{name}",
            self._core.read_namespaced_service_account,
            name,
            self._namespace,
        )
        return service_account_from_object(obj)

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[ServiceAccount] | WatchBookmark]:
        return watch(self._calls, self._source, resource_version, timeout_seconds)

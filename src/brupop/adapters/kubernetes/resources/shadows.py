"""KubernetesShadowRepository: BottlerocketShadow custom objects in brupop's namespace.

Status goes through the `/status` subresource. Spec writes, and the status writes that change
what was read (the controller's failure records), are JSON merge patches that carry
`metadata.resourceVersion`, so the apiserver refuses them (409) if the shadow changed since.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import structlog
from kubernetes.client import CustomObjectsApi

from brupop.adapters.kubernetes.api import watching
from brupop.adapters.kubernetes.api.calls import JSON, MERGE_PATCH, ApiCalls
from brupop.adapters.kubernetes.resources.shadow_objects import (
    GROUP,
    PLURAL,
    VERSION,
    new_shadow_object,
    shadow_from_object,
    spec_object,
    status_object,
)
from brupop.domain.cluster.objects import Listing, VersionListing, WatchBookmark, WatchEvent
from brupop.domain.shadow import API_VERSION_V2, KIND, Shadow, ShadowSpec, ShadowStatus
from brupop.ports.errors import ConflictError, InvalidObjectError

log = structlog.get_logger(__name__)


class KubernetesShadowRepository:
    """The ShadowRepository port over `brupop.bottlerocket.aws/v2` BottlerocketShadows."""

    def __init__(self, calls: ApiCalls, namespace: str, *, conflict_retries: int = 3) -> None:
        self._calls = calls
        self._api = CustomObjectsApi(calls.api_client)
        self.namespace = namespace
        self.conflict_retries = conflict_retries
        self._source = watching.WatchSource(
            action="watch shadows",
            list_method=self._api.list_namespaced_custom_object,
            decode=_readable_or_none,
            args=(GROUP, VERSION, namespace, PLURAL),
        )

    def get(self, name: str) -> Shadow:
        return shadow_from_object(self._get(name))

    def list(self) -> Listing[Shadow]:
        source = watching.WatchSource(
            "list shadows", self._source.list_method, _readable_or_none, self._source.args
        )
        items, version = watching.list_items(self._calls, source, watching.LIST_PAGE_SIZE)
        return Listing(items=tuple(item for item, _ in items), resource_version=version or None)

    def list_versions(self) -> VersionListing:
        source = watching.WatchSource(
            "list shadows", self._source.list_method, _readable_or_none, self._source.args
        )
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{self.namespace}/{PLURAL}"
        return watching.list_versions(self._calls, source, path, watching.LIST_PAGE_SIZE)

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Shadow] | WatchBookmark]:
        return watching.watch(self._calls, self._source, resource_version, timeout_seconds)

    def create(self, node_name: str, node_uid: str) -> Shadow:
        body = new_shadow_object(self.namespace, node_name, node_uid)
        created = self._calls.json(
            f"create shadow of node {node_name!r}",
            self._api.create_namespaced_custom_object,
            GROUP,
            VERSION,
            self.namespace,
            PLURAL,
            body,
        )
        return shadow_from_object(created)

    def replace_spec(self, name: str, spec: ShadowSpec, resource_version: str | None) -> Shadow:
        """Guarded by `resource_version`: a 409 is the caller's ConflictError. With None, the
        adapter guards the write with the version it reads, re-reading on 409 a few times."""
        if resource_version is not None:
            return self._patch_spec(name, spec, resource_version)
        for _ in range(self.conflict_retries):
            current = self._get(name)["metadata"].get("resourceVersion")
            try:
                return self._patch_spec(name, spec, current)
            except ConflictError:
                log.info("shadow.spec_conflict_retry", shadow=name, resource_version=current)
        raise ConflictError(
            f"spec of shadow {name!r}: still conflicting after {self.conflict_retries} attempts"
        )

    def update_status(
        self, name: str, status: ShadowStatus, resource_version: str | None = None
    ) -> Shadow:
        """Guarded like a spec write when given `resource_version` (a 409 is ConflictError, not
        retried: the caller read the status it changes, and must read it again)."""
        body: JSON = {"apiVersion": API_VERSION_V2, "kind": KIND, "status": status_object(status)}
        if resource_version is not None:
            body["metadata"] = {"resourceVersion": resource_version}
        method = self._api.patch_namespaced_custom_object_status
        return self._merge_patch(f"update status of shadow {name!r}", method, name, body)

    def delete(self, name: str) -> None:
        self._calls.json(
            f"delete shadow {name!r}",
            self._api.delete_namespaced_custom_object,
            GROUP,
            VERSION,
            self.namespace,
            PLURAL,
            name,
        )

    def _get(self, name: str) -> JSON:
        return self._calls.json(
            f"get shadow {name!r}",
            self._api.get_namespaced_custom_object,
            GROUP,
            VERSION,
            self.namespace,
            PLURAL,
            name,
        )

    def _patch_spec(self, name: str, spec: ShadowSpec, resource_version: str | None) -> Shadow:
        body: JSON = {"apiVersion": API_VERSION_V2, "kind": KIND, "spec": spec_object(spec)}
        if resource_version is not None:
            body["metadata"] = {"resourceVersion": resource_version}
        method = self._api.patch_namespaced_custom_object
        return self._merge_patch(f"update spec of shadow {name!r}", method, name, body)

    def _merge_patch(
        self, action: str, method: Callable[..., Any], name: str, body: JSON
    ) -> Shadow:
        """Merge-patch shadow `name` with `body` through `method` (the object or its `/status`)
        and read back what the apiserver stored."""
        patched = self._calls.json(
            action,
            method,
            GROUP,
            VERSION,
            self.namespace,
            PLURAL,
            name,
            body,
            _content_type=MERGE_PATCH,
        )
        return shadow_from_object(patched)


def _readable_or_none(obj: JSON) -> Shadow | None:
    """Lists and watches skip a shadow they cannot read, saying so, rather than fail."""
    try:
        return shadow_from_object(obj)
    except InvalidObjectError as error:
        log.warning("shadow.unreadable", error=str(error))
        return None

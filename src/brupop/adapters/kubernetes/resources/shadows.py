"""KubernetesShadowRepository: BottlerocketShadow custom objects in brupop's namespace.

Status goes through the `/status` subresource. Spec writes, and the status writes that change
what was read (the controller's failure records), are JSON merge patches that carry
`metadata.resourceVersion`, so the apiserver refuses them (409) if the shadow changed since.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import structlog
from kubernetes.client import CustomObjectsApi

from brupop.adapters.kubernetes.api import watching
from brupop.adapters.kubernetes.api.calls import JSON, MERGE_PATCH, ApiCalls
from brupop.adapters.kubernetes.api.shared_values import SharedValues
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
        self._where = (GROUP, VERSION, namespace, PLURAL)  # every call's first arguments
        # Lists and watches fill mirrors of every shadow: equal specs and statuses held once.
        self._shared = SharedValues()
        self._source = watching.WatchSource(
            action="watch shadows",
            list_method=self._api.list_namespaced_custom_object,
            decode=self._readable_or_none,
            args=self._where,
        )
        self._listing = dataclasses.replace(self._source, action="list shadows")

    def get(self, name: str) -> Shadow:
        return shadow_from_object(self._get(name))

    def list(self) -> Listing[Shadow]:
        items, version = watching.list_items(self._calls, self._listing, watching.LIST_PAGE_SIZE)
        return Listing(items=tuple(item for item, _ in items), resource_version=version or None)

    def list_versions(self) -> VersionListing:
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{self.namespace}/{PLURAL}"
        return watching.list_versions(self._calls, self._listing, path, watching.LIST_PAGE_SIZE)

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Shadow] | WatchBookmark]:
        return watching.watch(self._calls, self._source, resource_version, timeout_seconds)

    def create(self, node_name: str, node_uid: str) -> Shadow:
        body = new_shadow_object(self.namespace, node_name, node_uid)
        created = self._calls.json(
            f"create shadow of node {node_name!r}",
            self._api.create_namespaced_custom_object,
            *self._where,
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
        method = self._api.patch_namespaced_custom_object_status
        return self._merge_patch(name, "status", status_object(status), resource_version, method)

    def delete(self, name: str) -> None:
        action = f"delete shadow {name!r}"
        self._calls.json(action, self._api.delete_namespaced_custom_object, *self._where, name)

    def _get(self, name: str) -> JSON:
        action = f"get shadow {name!r}"
        return self._calls.json(action, self._api.get_namespaced_custom_object, *self._where, name)

    def _patch_spec(self, name: str, spec: ShadowSpec, resource_version: str | None) -> Shadow:
        method = self._api.patch_namespaced_custom_object
        return self._merge_patch(name, "spec", spec_object(spec), resource_version, method)

    def _merge_patch(
        self,
        name: str,
        part: str,
        value: JSON,
        resource_version: str | None,
        method: Callable[..., Any],
    ) -> Shadow:
        """Merge-patch `part` (spec or status, through the object's or its `/status` `method`)
        of shadow `name`, guarded by `resource_version` when given; what the apiserver stored."""
        body: JSON = {"apiVersion": API_VERSION_V2, "kind": KIND, part: value}
        if resource_version is not None:
            body["metadata"] = {"resourceVersion": resource_version}
        action = f"update {part} of shadow {name!r}"
        patched = self._calls.json(
            action, method, *self._where, name, body, _content_type=MERGE_PATCH
        )
        return shadow_from_object(patched)

    def _readable_or_none(self, obj: JSON) -> Shadow | None:
        """Lists and watches skip a shadow they cannot read, saying so, rather than fail."""
        try:
            return shadow_from_object(obj, self._shared)
        except InvalidObjectError as error:
            log.warning("shadow.unreadable", error=str(error))
            return None

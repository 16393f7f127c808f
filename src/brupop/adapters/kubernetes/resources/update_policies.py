"""KubernetesUpdatePolicyRepository: BottlerocketUpdatePolicy custom objects in brupop's
namespace, read through the custom objects API; the status goes through `/status`. Spec
and conditional status writes are merge patches carrying `metadata.resourceVersion`, which the
apiserver refuses (409) when the object changed since."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import structlog
from kubernetes.client import CustomObjectsApi, V1DeleteOptions, V1Preconditions

from brupop.adapters.kubernetes.api import watching
from brupop.adapters.kubernetes.api.calls import JSON, MERGE_PATCH, ApiCalls
from brupop.domain.cluster.objects import WatchBookmark, WatchEvent
from brupop.domain.policy.policy_object import (
    PolicyObjectError,
    PolicySnapshot,
    UpdatePolicy,
    policy_from_object,
    policy_snapshot,
)
from brupop.domain.policy.update_policy import (
    API_VERSION,
    DEFAULT_POLICY_NAME,
    KIND,
    PAUSE_CREATED_ANNOTATION,
    PAUSE_CREATED_VALUE,
    UpdatePolicySpec,
)
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.shadow import API_GROUP

log = structlog.get_logger(__name__)
VERSION = "v1"
PLURAL = "bottlerocketupdatepolicies"


class KubernetesUpdatePolicyRepository:
    """The UpdatePolicyRepository port over `brupop.bottlerocket.aws/v1` policies."""

    def __init__(self, calls: ApiCalls, namespace: str) -> None:
        self._calls = calls
        self._api = CustomObjectsApi(calls.api_client)
        self.namespace = namespace
        self._source = watching.WatchSource(
            action="watch update policies",
            list_method=self._api.list_namespaced_custom_object,
            decode=_readable_or_none,
            args=(API_GROUP, VERSION, namespace, PLURAL),
        )

    def read(self) -> PolicySnapshot:
        source = watching.WatchSource(
            "list update policies", self._source.list_method, _readable_or_none, self._source.args
        )
        items, version = watching.list_items(self._calls, source)
        return policy_snapshot((item for item, _ in items), version or None)

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[UpdatePolicy] | WatchBookmark]:
        return watching.watch(self._calls, self._source, resource_version, timeout_seconds)

    def get(self) -> UpdatePolicy:
        found = self._calls.json(
            f"get update policy {DEFAULT_POLICY_NAME!r}",
            self._api.get_namespaced_custom_object,
            *self._source.args,
            DEFAULT_POLICY_NAME,
        )
        return policy_from_object(found)

    def create(self, spec: UpdatePolicySpec, pause_created: bool = False) -> UpdatePolicy:
        written = {"paused": spec.paused} | spec.model_dump(mode="json", exclude_defaults=True)
        metadata: JSON = {"name": DEFAULT_POLICY_NAME, "namespace": self.namespace}
        if pause_created:
            metadata["annotations"] = {PAUSE_CREATED_ANNOTATION: PAUSE_CREATED_VALUE}
        body: JSON = {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": metadata,
            "spec": written,
        }
        created = self._calls.json(
            f"create update policy {DEFAULT_POLICY_NAME!r}",
            self._api.create_namespaced_custom_object,
            *self._source.args,
            body,
        )
        return policy_from_object(created)

    def delete_default(self, resource_version: str) -> None:
        options = V1DeleteOptions(preconditions=V1Preconditions(resource_version=resource_version))
        self._calls.json(
            f"delete update policy {DEFAULT_POLICY_NAME!r}",
            self._api.delete_namespaced_custom_object,
            *self._source.args,
            DEFAULT_POLICY_NAME,
            body=options,
        )

    def set_paused(self, paused: bool, resource_version: str) -> UpdatePolicy:
        body: JSON = {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"resourceVersion": resource_version},  # the apiserver's 409 guard
            "spec": {"paused": paused},
        }
        action = f"{'pause' if paused else 'unpause'} update policy {DEFAULT_POLICY_NAME!r}"
        return self._merge_patch(action, self._api.patch_namespaced_custom_object, body)

    def update_status(
        self, status: UpdatePolicyStatus, resource_version: str | None = None
    ) -> UpdatePolicy:
        body: JSON = {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "status": status.model_dump(mode="json"),  # None fields: removed by the merge patch
        }
        if resource_version is not None:
            body["metadata"] = {"resourceVersion": resource_version}
        action = f"update status of update policy {DEFAULT_POLICY_NAME!r}"
        return self._merge_patch(action, self._api.patch_namespaced_custom_object_status, body)

    def _merge_patch(self, action: str, method: Callable[..., Any], body: JSON) -> UpdatePolicy:
        """Merge-patch the `default` policy with `body` through `method` (the object or its
        `/status`) and read back what the apiserver stored."""
        patched = self._calls.json(
            action, method, *self._source.args, DEFAULT_POLICY_NAME, body, _content_type=MERGE_PATCH
        )
        return policy_from_object(patched)


def _readable_or_none(obj: JSON) -> UpdatePolicy | None:
    """A bad spec is still a policy (spec=None); only an object without a name is skipped."""
    try:
        return policy_from_object(obj)
    except PolicyObjectError as error:
        log.warning("update_policy.unreadable", error=str(error))
        return None

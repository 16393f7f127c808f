"""KubernetesLeaseStore: `coordination.k8s.io/v1` Leases for the controller's leader election.

Replace is a PUT carrying the resourceVersion read, so two candidates cannot both win.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kubernetes.client import CoordinationV1Api

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls
from brupop.adapters.kubernetes.api.decoding import mapping, reads, text_or_none
from brupop.domain.cluster.objects import Lease
from brupop.domain.timestamps import rfc3339_or_none


@reads("Lease")
def lease_from_object(obj: JSON) -> Lease:
    """The domain Lease of a `coordination.k8s.io/v1 Lease` object."""
    meta = mapping(obj.get("metadata"))
    spec = mapping(obj.get("spec"))
    return Lease(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        holder=text_or_none(spec.get("holderIdentity")),
        duration_seconds=_whole(spec.get("leaseDurationSeconds")),
        acquired_at=rfc3339_or_none(text_or_none(spec.get("acquireTime"))),
        renewed_at=rfc3339_or_none(text_or_none(spec.get("renewTime"))),
        transitions=_whole(spec.get("leaseTransitions")),
        resource_version=text_or_none(meta.get("resourceVersion")),
    )


def _whole(value: object) -> int:
    """A non-negative int32 field; 0 when absent or of another type."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return min(max(value, 0), 2**31 - 1)


def lease_object(lease: Lease) -> JSON:
    """The Lease as `coordination.k8s.io/v1` JSON (MicroTime timestamps)."""
    meta: JSON = {"name": lease.name, "namespace": lease.namespace}
    if lease.resource_version is not None:
        meta["resourceVersion"] = lease.resource_version
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": meta,
        "spec": {
            "holderIdentity": lease.holder,
            "leaseDurationSeconds": lease.duration_seconds,
            "acquireTime": _format_micro_time(lease.acquired_at),
            "renewTime": _format_micro_time(lease.renewed_at),
            "leaseTransitions": lease.transitions,
        },
    }


def _format_micro_time(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class KubernetesLeaseStore:
    """The LeaseStore port over `coordination.k8s.io/v1` Leases."""

    def __init__(self, calls: ApiCalls) -> None:
        self._calls = calls
        self._api = CoordinationV1Api(calls.api_client)

    def get(self, namespace: str, name: str) -> Lease:
        obj = self._calls.json(
            f"get lease {namespace}/{name}", self._api.read_namespaced_lease, name, namespace
        )
        return lease_from_object(obj)

    def create(self, lease: Lease) -> Lease:
        body = lease_object(lease)
        body["metadata"].pop("resourceVersion", None)
        obj = self._calls.json(
            f"create lease {lease.namespace}/{lease.name}",
            self._api.create_namespaced_lease,
            lease.namespace,
            body,
        )
        return lease_from_object(obj)

    def replace(self, lease: Lease) -> Lease:
        obj = self._calls.json(
            f"replace lease {lease.namespace}/{lease.name}",
            self._api.replace_namespaced_lease,
            lease.name,
            lease.namespace,
            lease_object(lease),
        )
        return lease_from_object(obj)

"""What simulate may touch on a real cluster: only what carries its mark.

Every object simulate creates is labelled SIMULATED. Before it changes anything it refuses a
cluster holding a Node without that label, or any object it would create that exists without
it: it never runs against a cluster that matters. What a previous run left (a kept work
directory) carries the mark and is removed first; at the end, what this run made is removed
unless it is kept for a look.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping
from typing import Any

import structlog
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError

from brupop.cli.fleet_description.simulated_cluster import ClusterRefused

SIMULATED = "brupop.bottlerocket.aws/simulated"
SIMULATED_SELECTOR = f"{SIMULATED}=true"
_FOREIGN_NAMED = 3
_GONE_SECONDS = 90.0
_POLL_SECONDS = 0.2

# Removed in this order: pods first (at once, with no kubelet to wait for), then the
# namespaces that hold the rest, the workloads and RBAC elsewhere, the CRDs, the Nodes last.
_NAMESPACED = (
    ("v1", "Pod"),
    ("policy/v1", "PodDisruptionBudget"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "Role"),
)
_CLUSTER_WIDE = (
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("v1", "Node"),
)
_AWAITED = (("v1", "Namespace"), ("apiextensions.k8s.io/v1", "CustomResourceDefinition"))

log = structlog.get_logger(__name__)


def marked(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `obj` labelled as simulate's."""
    copy = dict(obj)
    metadata = dict(copy.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), SIMULATED: "true"}
    copy["metadata"] = metadata
    return copy


def is_marked(metadata: Mapping[str, Any] | None) -> bool:
    return ((metadata or {}).get("labels") or {}).get(SIMULATED) == "true"


def refuse_foreign(dynamic: DynamicClient, planned: Iterable[Mapping[str, Any]]) -> None:
    """ClusterRefused, naming what is not simulate's: a Node, or an object it would create."""
    nodes = _resource(dynamic, "v1", "Node").get().to_dict().get("items") or []
    foreign = [n["metadata"]["name"] for n in nodes if not is_marked(n.get("metadata"))]
    if foreign:
        named = ", ".join(foreign[:_FOREIGN_NAMED]) + (", ..." if len(foreign) > 3 else "")
        raise ClusterRefused(
            f"--kubeconfig: the cluster holds {len(foreign)} Node(s) simulate did not create "
            f"({named}); it runs only on a cluster of its own (scripts/control-plane up DIR)"
        )
    for obj in planned:
        metadata = obj["metadata"]
        found = _existing(dynamic, obj["apiVersion"], obj["kind"], metadata)
        if found is not None and not is_marked(found.get("metadata")):
            where = f"{metadata['namespace']}/" if metadata.get("namespace") else ""
            raise ClusterRefused(
                f"--kubeconfig: {obj['kind']} {where}{metadata['name']} exists and simulate did "
                "not create it; it runs only on a cluster of its own (scripts/control-plane up DIR)"
            )


def remove_simulated(dynamic: DynamicClient) -> int:
    """Delete every object that carries the mark and wait until its namespaces and CRDs are
    gone; how many objects were deleted."""
    deleted = 0
    for api_version, kind in _NAMESPACED[:1]:
        deleted += _delete_marked(dynamic, api_version, kind, grace_period_seconds=0)
    deleted += _delete_marked(dynamic, "v1", "Namespace")
    for api_version, kind in _NAMESPACED[1:] + _CLUSTER_WIDE:
        deleted += _delete_marked(dynamic, api_version, kind)
    deadline = time.monotonic() + _GONE_SECONDS
    for api_version, kind in _AWAITED:
        resource = _resource(dynamic, api_version, kind)
        while resource.get(label_selector=SIMULATED_SELECTOR).to_dict().get("items"):
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"simulate's {kind} objects were not gone after {_GONE_SECONDS:g} s"
                )
            time.sleep(_POLL_SECONDS)
    if deleted:
        log.info("simulate.cluster_cleared", deleted=deleted)
    return deleted


def _delete_marked(dynamic: DynamicClient, api_version: str, kind: str, **options: Any) -> int:
    resource = _resource(dynamic, api_version, kind)
    items = resource.get(label_selector=SIMULATED_SELECTOR).to_dict().get("items") or []
    for item in items:
        metadata = item["metadata"]
        with contextlib.suppress(NotFoundError):  # gone already (a namespace took it)
            resource.delete(name=metadata["name"], namespace=metadata.get("namespace"), **options)
    return len(items)


def _existing(
    dynamic: DynamicClient, api_version: str, kind: str, metadata: Mapping[str, Any]
) -> dict[str, Any] | None:
    resource = _resource(dynamic, api_version, kind)
    try:
        found: dict[str, Any] = resource.get(
            name=metadata["name"], namespace=metadata.get("namespace")
        ).to_dict()
    except NotFoundError:
        return None
    return found


def _resource(dynamic: DynamicClient, api_version: str, kind: str) -> Any:
    return dynamic.resources.get(api_version=api_version, kind=kind)

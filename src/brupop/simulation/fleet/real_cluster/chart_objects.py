"""What simulate installs from brupop itself: the chart's namespace and RBAC, as the rendered
manifest has them, and both CRDs from the models, with the shadow CRD's conversion webhook
pointing at simulate's own apiserver (its URL and throwaway CA), which kube-apiserver calls.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kubernetes.dynamic import DynamicClient

from brupop.adapters.system.bounded_yaml import YamlRefused, load_yaml_file
from brupop.cli.crd.definition import CONVERSION_PATH
from brupop.cli.crd.install import webhook_crds
from brupop.cli.fleet_description.simulated_cluster import ClusterRefused
from brupop.simulation.fleet.real_cluster.ownership import marked

RBAC_KINDS = frozenset(
    {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
)
_MANIFEST_MAX_BYTES = 4 * 1024 * 1024
_MANIFEST_MAX_VALUES = 1_048_576  # counted with every alias expanded
_ESTABLISHED_SECONDS = 30.0
_POLL_SECONDS = 0.1
PLACEHOLDER_URL = "https://127.0.0.1:1"  # the CRDs' names do not depend on it


def chart_rbac(manifest: Path, namespace: str) -> list[dict[str, Any]]:
    """The namespace, ServiceAccounts, roles and bindings of the rendered chart, marked as
    simulate's; ClusterRefused for a manifest that is not one for `namespace`."""
    try:
        documents = load_yaml_file(
            manifest, max_bytes=_MANIFEST_MAX_BYTES, max_values=_MANIFEST_MAX_VALUES
        )
    except YamlRefused as error:
        raise ClusterRefused(f"--manifest: {manifest}: {error}") from None
    chosen = [d for d in documents if isinstance(d, dict) and d.get("kind") in RBAC_KINDS]
    for obj in chosen:
        if not _readable(obj):
            raise ClusterRefused(
                f"--manifest: {manifest}: a {obj['kind']} without an apiVersion, a "
                "metadata.name or labels as a mapping"
            )
    namespaces = {d["metadata"]["name"] for d in chosen if d["kind"] == "Namespace"}
    if namespaces != {namespace}:
        raise ClusterRefused(
            f"--manifest: {manifest}: its Namespace is {sorted(namespaces) or 'missing'}, "
            f"not brupop's {namespace!r}"
        )
    return [marked(d) for d in chosen]


def _readable(obj: Mapping[str, Any]) -> bool:
    """What simulate reads of an RBAC object, and marks, is there and of its type."""
    metadata = obj.get("metadata")
    return (
        isinstance(obj.get("apiVersion"), str)
        and isinstance(metadata, dict)
        and isinstance(metadata.get("name"), str)
        and isinstance(metadata.get("labels") or {}, dict)
    )


def brupop_crds(namespace: str, apiserver_url: str, ca_pem: bytes) -> list[dict[str, Any]]:
    """Both CRDs, the shadow's converted by `apiserver_url`'s /crdconvert, marked."""
    crds = webhook_crds(f"{apiserver_url}{CONVERSION_PATH}", ca_pem, namespace)
    return [marked(crd) for crd in crds]


def create_all(dynamic: DynamicClient, objects: Iterable[Mapping[str, Any]]) -> None:
    """Create each object, in order (namespaces before what they hold)."""
    for obj in objects:
        resource = dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        resource.create(body=dict(obj), namespace=obj["metadata"].get("namespace"))


def wait_established(dynamic: DynamicClient, names: Iterable[str]) -> None:
    """Until every named CRD is Established (its resources are served)."""
    resource = dynamic.resources.get(
        api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"
    )
    deadline = time.monotonic() + _ESTABLISHED_SECONDS
    for name in names:
        while not _established(resource.get(name=name).to_dict()):
            if time.monotonic() > deadline:
                raise RuntimeError(f"CRD {name} not Established after {_ESTABLISHED_SECONDS:g} s")
            time.sleep(_POLL_SECONDS)


def _established(crd: Mapping[str, Any]) -> bool:
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)

"""BottlerocketShadow custom objects (CRD v2 JSON) to and from the domain's Shadow.

The owning Node comes from the ownerReference of kind Node, as the controller's node selector
did in the original; a shadow without one falls back to the node named after it (`brs-<node>`).
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import ValidationError

from brupop.adapters.kubernetes.api.decoding import entries, mapping, reads, text_or_none
from brupop.adapters.kubernetes.api.shared_values import SharedValues
from brupop.domain.shadow import (
    API_GROUP,
    API_VERSION_V2,
    KIND,
    SHADOW_NAME_PREFIX,
    Shadow,
    ShadowSpec,
    ShadowStatus,
    shadow_name,
)
from brupop.ports.errors import InvalidObjectError

GROUP = API_GROUP
VERSION = "v2"
PLURAL = "bottlerocketshadows"
JSON = dict[str, Any]


@reads("BottlerocketShadow")
def shadow_from_object(obj: JSON, shared: SharedValues | None = None) -> Shadow:
    """The domain Shadow of a custom object; InvalidObjectError when it cannot be read. With
    `shared`, a spec or status equal to one decoded before is that one (the mirrors' memory)."""
    meta = mapping(obj.get("metadata"))
    name = str(meta.get("name") or "")
    node_name, node_uid = _owner_node(meta, name)
    try:
        spec = ShadowSpec.model_validate(obj.get("spec") or {})
        raw_status = obj.get("status")  # pydantic refuses a status of the wrong type
        status = ShadowStatus.model_validate(raw_status) if raw_status else None
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        raise InvalidObjectError(
            f"shadow {name[:253]!r} cannot be read: {problems[:300]}"
        ) from None
    if shared is not None:
        spec = shared.share(spec)
        status = shared.share(status) if status is not None else None
    return Shadow(
        name=name,
        namespace=sys.intern(str(meta.get("namespace") or "")),
        node_name=node_name,
        node_uid=node_uid,
        resource_version=text_or_none(meta.get("resourceVersion")),
        uid=text_or_none(meta.get("uid")),
        spec=spec,
        status=status,
    )


def new_shadow_object(namespace: str, node_name: str, node_uid: str) -> JSON:
    """The object the apiserver creates for a node: owned by it, spec at its default."""
    return {
        "apiVersion": API_VERSION_V2,
        "kind": KIND,
        "metadata": {
            "name": shadow_name(node_name),
            "namespace": namespace,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": node_uid}
            ],
        },
        "spec": spec_object(ShadowSpec()),
    }


def spec_object(spec: ShadowSpec) -> JSON:
    """The spec as wire JSON; unset fields are explicit nulls, which a merge patch removes."""
    return spec.model_dump(mode="json")


def status_object(status: ShadowStatus) -> JSON:
    """The status as wire JSON; unset fields are explicit nulls, which a merge patch removes."""
    return status.model_dump(mode="json")


def _owner_node(meta: JSON, name: str) -> tuple[str, str]:
    owners = entries(meta.get("ownerReferences"))
    nodes = [ref for ref in owners if ref.get("kind") == "Node"] or owners
    if nodes and nodes[0].get("name"):
        return str(nodes[0]["name"]), str(nodes[0].get("uid") or "")
    if name.startswith(SHADOW_NAME_PREFIX):
        return name[len(SHADOW_NAME_PREFIX) :], ""
    raise InvalidObjectError(f"shadow {name!r} has no owning Node")

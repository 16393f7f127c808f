"""Reading the apiserver's BottlerocketShadow documents into domain Shadows."""

from __future__ import annotations

from typing import Any

from brupop.domain.shadow import Shadow
from brupop.ports.errors import UnavailableError


def shadow_from_document(document: Any) -> Shadow:
    """The Shadow in a v2 BottlerocketShadow object; UnavailableError when it is not one."""
    try:
        metadata = document["metadata"]
        owner = next(o for o in metadata.get("ownerReferences") or () if o.get("kind") == "Node")
        return Shadow(
            name=metadata["name"],
            namespace=metadata.get("namespace") or "",
            node_name=owner["name"],
            node_uid=owner["uid"],
            resource_version=metadata.get("resourceVersion"),
            uid=metadata.get("uid"),
            spec=document.get("spec") or {},
            status=document.get("status"),
        )
    except (
        KeyError,
        TypeError,
        AttributeError,
        StopIteration,
        ValueError,  # pydantic's ValidationError included
        RecursionError,
    ) as error:
        kind = type(error).__name__
        raise UnavailableError(f"the apiserver sent a shadow brupop cannot read ({kind})") from None

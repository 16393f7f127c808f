"""Reading the apiserver's BottlerocketShadow documents into the agent's Shadows."""

from __future__ import annotations

from brupop.domain.host import wire_values as wire
from brupop.domain.host.agent_shadow import AgentShadow, AgentShadowSpec, AgentShadowStatus
from brupop.ports.errors import UnavailableError

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any


def shadow_from_document(document: Any) -> AgentShadow:
    """The AgentShadow in a v2 BottlerocketShadow object; UnavailableError when it is not one."""
    try:
        metadata = document["metadata"]
        owner = next(o for o in metadata.get("ownerReferences") or () if o.get("kind") == "Node")
        status = document.get("status")
        return AgentShadow(
            name=wire.text(metadata, "name"),
            namespace=_namespace(metadata),
            node_name=wire.text(owner, "name"),
            node_uid=wire.text(owner, "uid"),
            resource_version=wire.optional_text(metadata, "resourceVersion"),
            uid=wire.optional_text(metadata, "uid"),
            spec=AgentShadowSpec.from_json(document.get("spec") or {}),
            status=None if status is None else AgentShadowStatus.from_json(status),
        )
    except (
        KeyError,
        TypeError,
        AttributeError,
        StopIteration,
        ValueError,  # WireFormatError and TimestampError included
        RecursionError,
    ) as error:
        kind = type(error).__name__
        raise UnavailableError(f"the apiserver sent a shadow brupop cannot read ({kind})") from None


def _namespace(metadata: Any) -> str:
    """The object's namespace; a missing or empty one reads as ''."""
    return wire.text({"namespace": metadata.get("namespace") or ""}, "namespace")

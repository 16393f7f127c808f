"""The JSON the apiserver speaks: shadows as BottlerocketShadow objects, errors as short bodies."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from brupop.domain.shadow import API_VERSION_V2, KIND, Shadow

MAX_ERROR_LENGTH = 300


def shadow_document(shadow: Shadow) -> dict[str, Any]:
    """The shadow as the cluster stores it (v2), with the metadata the agent needs."""
    metadata: dict[str, Any] = {
        "name": shadow.name,
        "namespace": shadow.namespace,
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Node", "name": shadow.node_name, "uid": shadow.node_uid}
        ],
    }
    if shadow.uid is not None:
        metadata["uid"] = shadow.uid
    if shadow.resource_version is not None:
        metadata["resourceVersion"] = shadow.resource_version
    document: dict[str, Any] = {
        "apiVersion": API_VERSION_V2,
        "kind": KIND,
        "metadata": metadata,
        "spec": shadow.spec.model_dump(mode="json"),
    }
    if shadow.status is not None:
        document["status"] = shadow.status.model_dump(mode="json")
    return document


def error_body(message: str, **extra: Any) -> dict[str, Any]:
    """`{"error": message}` with the message cut to a few hundred characters."""
    text = message if len(message) <= MAX_ERROR_LENGTH else message[: MAX_ERROR_LENGTH - 3] + "..."
    return {"error": text, **extra}


def error_response(status: int, message: str, **extra: Any) -> JSONResponse:
    """A JSON error answer; never a traceback, never the caller's input echoed at length."""
    headers = {"Retry-After": "5"} if status in (429, 503) else None
    return JSONResponse(error_body(message, **extra), status_code=status, headers=headers)

"""Validate shadow objects against the CRD's OpenAPI schemas the way the kube-apiserver would.

Plain JSON Schema ignores OpenAPI's `nullable`, so it becomes "null, or the schema". The strict
form also refuses fields the schema does not declare: the apiserver would silently prune them,
so a real-shaped object that carries one is out of step with the CRD.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import jsonschema

from brupop.cli.crd.definition import custom_resource_definition

# What every object has besides spec and status; the apiserver checks these itself.
OBJECT_ENVELOPE = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
}


def openapi_to_json_schema(node: Mapping[str, Any], *, strict: bool) -> dict[str, Any]:
    """The plain JSON Schema of a CRD's OpenAPI v3 schema node (and its children)."""
    skipped = ("nullable", "properties", "items")
    result = {key: value for key, value in node.items() if key not in skipped}
    if node.get("nullable"):
        # The apiserver checks only type and enum of a null value: nothing else applies to it.
        inner = openapi_to_json_schema(
            {k: v for k, v in node.items() if k != "nullable"}, strict=strict
        )
        return {"anyOf": [{"type": "null"}, inner]}
    if result.pop("x-kubernetes-int-or-string", False):
        result["type"] = ["integer", "string"]
    if "items" in node:
        result["items"] = openapi_to_json_schema(node["items"], strict=strict)
    if "properties" in node:
        result["properties"] = {
            name: openapi_to_json_schema(child, strict=strict)
            for name, child in node["properties"].items()
        }
        if strict:
            result["additionalProperties"] = False
    return result


@functools.cache
def shadow_validator(version: str, *, strict: bool) -> jsonschema.Draft202012Validator:
    """A validator for whole BottlerocketShadow objects of CRD version `version`."""
    (served,) = [
        v for v in custom_resource_definition()["spec"]["versions"] if v["name"] == version
    ]
    schema = openapi_to_json_schema(served["schema"]["openAPIV3Schema"], strict=strict)
    schema["properties"] = {**OBJECT_ENVELOPE, **schema["properties"]}
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(obj: Mapping[str, Any], version: str = "v2", *, strict: bool = False) -> list[str]:
    """Why the apiserver would refuse `obj` (strict: or prune part of it); empty when it fits."""
    validator = shadow_validator(version, strict=strict)
    return [
        f"{'.'.join(map(str, error.absolute_path)) or '<object>'}: {error.message}"
        for error in validator.iter_errors(obj)
    ]

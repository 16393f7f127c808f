"""What kube-apiserver does with a custom resource's body before storing it, for the emulator:
drop non-nullable nulls and unknown fields (pruning), then validate against the CRD's schema.

The schemas are brupop's generated CRDs (v2 shadows, v1 policies), so the emulator refuses
with 422 what a real server refuses. As on a real server (validation ratcheting), a write is
checked only in the parts it changes: spec on the main resource, status on `/status`.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema

from brupop.cli.crd.definition import custom_resource_definition
from brupop.cli.crd.policy_definition import policy_custom_resource_definition
from tests.deploy.shadow_schema import openapi_to_json_schema
from tests.support.kube_api_rules import POLICIES, SHADOWS, Kind

JSON = dict[str, Any]
SECTIONS = ("spec", "status")


class SchemaRefusalError(ValueError):
    """The body breaks the CRD's schema; the message reads like kube-apiserver's."""


@functools.cache
def _schemas() -> dict[Kind, JSON]:
    """The openAPIV3Schema of the version the emulator serves, per custom kind."""
    (shadow,) = [v for v in custom_resource_definition()["spec"]["versions"] if v["name"] == "v2"]
    (policy,) = policy_custom_resource_definition()["spec"]["versions"]
    return {
        SHADOWS: shadow["schema"]["openAPIV3Schema"],
        POLICIES: policy["schema"]["openAPIV3Schema"],
    }


@functools.cache
def _validator(kind: Kind, section: str) -> jsonschema.Draft202012Validator:
    schema = openapi_to_json_schema(_schemas()[kind]["properties"][section], strict=False)
    return jsonschema.Draft202012Validator(schema)


def has_schema(kind: Kind) -> bool:
    return kind in _schemas()


def admitted(kind: Kind, obj: JSON, old: JSON | None, *, status_only: bool) -> JSON:
    """`obj` pruned as kube-apiserver prunes it; SchemaRefusalError when the section the write
    changes breaks the schema."""
    root = _schemas()[kind]
    result = {key: value for key, value in obj.items() if key in ("apiVersion", "kind")}
    result["metadata"] = obj.get("metadata", {})
    for section in SECTIONS:
        if section in obj:
            result[section] = pruned(obj[section], root["properties"][section])
    checked = ("status",) if status_only else ("spec",)
    for section in checked:
        if section in result and result[section] != (old or {}).get(section):
            _check(kind, section, result)
    return result


def pruned(value: Any, schema: JSON) -> Any:
    """`value` without the fields `schema` does not declare and the nulls it does not allow."""
    if schema.get("x-kubernetes-int-or-string") or value is None:
        return value
    if isinstance(value, dict) and schema.get("type") == "object":
        declared = schema.get("properties", {})
        return {
            key: pruned(child, declared[key])
            for key, child in value.items()
            if key in declared and (child is not None or declared[key].get("nullable"))
        }
    if isinstance(value, list) and schema.get("type") == "array":
        return [pruned(item, schema["items"]) for item in value]
    return value


def _check(kind: Kind, section: str, obj: JSON) -> None:
    errors = sorted(_validator(kind, section).iter_errors(obj[section]), key=lambda e: e.path)
    if errors:
        name = obj["metadata"].get("name", "")
        causes = ", ".join(
            f"{'.'.join([section, *map(str, error.absolute_path)])}: {error.message}"
            for error in errors
        )
        raise SchemaRefusalError(f'{kind.kind}.{kind.group} "{name}" is invalid: {causes}')

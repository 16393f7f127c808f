"""Turn a pydantic model's JSON Schema into a structural OpenAPI v3 schema a CRD accepts.

Kubernetes wants every node typed, no `$ref`, no `anyOf` for optional values (it has
`nullable`), and no defaults unless the server should apply them. The wire rule brupop keeps
from the original CRD: a field is required unless it may be null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

# JSON Schema keywords that mean the same in a CRD's OpenAPI v3 schema and are kept as they are.
_KEPT_KEYWORDS = ("description", "type", "enum", "pattern", "minimum", "maximum", "format")
# Keywords pydantic writes that a CRD schema must not carry (titles and defaults are dropped).
_DROPPED_KEYWORDS = ("title", "default")


class CrdSchemaError(ValueError):
    """A model uses a type that has no structural OpenAPI form."""


def structural_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI v3 schema of `model`'s serialized (wire) form."""
    raw = model.model_json_schema(mode="serialization")
    definitions = raw.pop("$defs", {})
    return _convert(raw, definitions, where=model.__name__)


def _convert(node: Mapping[str, Any], definitions: Mapping[str, Any], where: str) -> dict[str, Any]:
    if "$ref" in node:
        return _convert(_resolve(node, definitions, where), definitions, where)
    if "anyOf" in node:
        return _nullable(node, definitions, where)
    unknown = set(node) - set(_KEPT_KEYWORDS) - set(_DROPPED_KEYWORDS) - {"properties", "required"}
    if unknown:
        raise CrdSchemaError(f"{where}: no CRD form for {sorted(unknown)}")
    if "type" not in node:
        raise CrdSchemaError(f"{where}: untyped value")
    result = {key: node[key] for key in _KEPT_KEYWORDS if key in node}
    if node["type"] == "object":
        properties = {
            name: _convert(child, definitions, f"{where}.{name}")
            for name, child in node.get("properties", {}).items()
        }
        result["properties"] = properties
        required = [name for name, child in properties.items() if not child.get("nullable")]
        if required:
            result["required"] = required
    return result


def _resolve(node: Mapping[str, Any], definitions: Mapping[str, Any], where: str) -> dict[str, Any]:
    name = str(node["$ref"]).rsplit("/", 1)[-1]
    if name not in definitions:
        raise CrdSchemaError(f"{where}: unknown reference {node['$ref']!r}")
    siblings = {key: value for key, value in node.items() if key != "$ref"}
    return {**definitions[name], **siblings}


def _nullable(
    node: Mapping[str, Any], definitions: Mapping[str, Any], where: str
) -> dict[str, Any]:
    branches = [branch for branch in node["anyOf"] if branch != {"type": "null"}]
    if len(branches) != 1 or len(branches) == len(node["anyOf"]):
        raise CrdSchemaError(f"{where}: only `X | None` unions have a CRD form")
    siblings = {key: value for key, value in node.items() if key != "anyOf"}
    converted = _convert({**branches[0], **siblings}, definitions, where)
    return {**converted, "nullable": True}

"""Turn a pydantic model's JSON Schema into a structural OpenAPI v3 schema a CRD accepts.

Kubernetes wants every node typed, no `$ref`, no `anyOf` for optional values (it has
`nullable`), and no defaults unless the server should apply them. The shadow's wire rule, kept
from the original CRD: a field is required unless it may be null. The update policy's rule is
the model's own: a field with a default may be left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

# JSON Schema keywords that mean the same in a CRD's OpenAPI v3 schema and are kept as they are.
_KEPT_KEYWORDS = (
    "description",
    "type",
    "enum",
    "pattern",
    "minimum",
    "maximum",
    "format",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
)
# Keywords pydantic writes that a CRD schema must not carry (titles and defaults are dropped;
# `additionalProperties: false` is implied: the apiserver prunes or refuses unknown fields).
_DROPPED_KEYWORDS = ("title", "default", "additionalProperties")
_STRUCTURE = ("properties", "required", "items", "oneOf")
# A value that is an integer or a string (a count or a percentage); Kubernetes' own marker.
_INT_OR_STRING = "x-kubernetes-int-or-string"
Required = Literal["not-nullable", "declared"]


def crd_version(
    name: str,
    description: str,
    columns: Sequence[tuple[str, str, str]],
    properties: Mapping[str, Any],
    *,
    storage: bool,
    required: Sequence[str] = (),
) -> dict[str, Any]:
    """One served version of a CRD with a status subresource: printer columns (name, JSON
    path, type) and an object schema of `properties`."""
    schema: dict[str, Any] = {"description": description, "type": "object"}
    schema["properties"] = dict(properties)
    if required:
        schema["required"] = list(required)
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "subresources": {"status": {}},
        "additionalPrinterColumns": [
            {"name": title, "jsonPath": path, "type": kind} for title, path, kind in columns
        ],
        "schema": {"openAPIV3Schema": schema},
    }


class CrdSchemaError(ValueError):
    """A model uses a type that has no structural OpenAPI form."""


def structural_schema(
    model: type[BaseModel],
    *,
    mode: Literal["serialization", "validation"] = "serialization",
    required: Required = "not-nullable",
) -> dict[str, Any]:
    """The OpenAPI v3 schema of `model`'s wire form: as written (`serialization`) or as
    accepted (`validation`). `required`: every field that may not be null (the shadow's rule),
    or the fields the model declares required (those without a default)."""
    raw = model.model_json_schema(mode=mode)
    definitions = raw.pop("$defs", {})
    return _Converter(definitions, required).convert(raw, model.__name__)


class _Converter:
    def __init__(self, definitions: Mapping[str, Any], required: Required) -> None:
        self.definitions = definitions
        self.required = required

    def convert(self, node: Mapping[str, Any], where: str) -> dict[str, Any]:
        if "$ref" in node:
            return self.convert(_resolve(node, self.definitions, where), where)
        if "anyOf" in node:
            return self._nullable(node, where)
        if node.get(_INT_OR_STRING) is True:
            described = {key: node[key] for key in ("description",) if key in node}
            return {_INT_OR_STRING: True, **described}
        unknown = set(node) - set(_KEPT_KEYWORDS) - set(_DROPPED_KEYWORDS) - set(_STRUCTURE)
        if unknown or node.get("additionalProperties", False) is not False:
            raise CrdSchemaError(f"{where}: no CRD form for {sorted(unknown) or node}")
        if "type" not in node:
            raise CrdSchemaError(f"{where}: untyped value")
        result = {key: node[key] for key in _KEPT_KEYWORDS if key in node}
        if node["type"] == "array":
            if "items" not in node:
                raise CrdSchemaError(f"{where}: array without an item type")
            result["items"] = self.convert(node["items"], f"{where}[]")
        if "oneOf" in node:
            result["oneOf"] = _presence_alternatives(node["oneOf"], where)
        if node["type"] == "object":
            properties = {
                name: self.convert(child, f"{where}.{name}")
                for name, child in node.get("properties", {}).items()
            }
            result["properties"] = _not_nullable(properties, result.get("oneOf", ()))
            required = self._required(node, properties)
            if required:
                result["required"] = required
        return result

    def _required(self, node: Mapping[str, Any], properties: Mapping[str, Any]) -> list[str]:
        if self.required == "declared":
            return [name for name in properties if name in node.get("required", ())]
        return [name for name, child in properties.items() if not child.get("nullable")]

    def _nullable(self, node: Mapping[str, Any], where: str) -> dict[str, Any]:
        branches = [branch for branch in node["anyOf"] if branch != {"type": "null"}]
        if len(branches) != 1 or len(branches) == len(node["anyOf"]):
            raise CrdSchemaError(f"{where}: only `X | None` unions have a CRD form")
        siblings = {key: value for key, value in node.items() if key != "anyOf"}
        converted = self.convert({**branches[0], **siblings}, where)
        return {**converted, "nullable": True}


def _presence_alternatives(branches: Any, where: str) -> list[dict[str, Any]]:
    """`oneOf` is kept only as a choice between required fields (`[{required: [a]}, ...]`):
    a structural schema allows that, and it is all the models use it for."""
    if not isinstance(branches, list) or not all(
        isinstance(branch, dict) and set(branch) == {"required"} for branch in branches
    ):
        raise CrdSchemaError(f"{where}: oneOf may only choose between required fields")
    return [{"required": list(branch["required"])} for branch in branches]


def _not_nullable(
    properties: dict[str, Any], alternatives: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The fields a presence `oneOf` chooses between, not nullable: the apiserver prunes a
    non-nullable null before it validates, so `{a: null, b: 3}` is `{b: 3}` and matches one
    alternative. Kept nullable, the null counts as present and matches both (a 422)."""
    chosen = {name for branch in alternatives for name in branch["required"]}
    return {
        name: {key: value for key, value in child.items() if key != "nullable"}
        if name in chosen
        else child
        for name, child in properties.items()
    }


def _resolve(node: Mapping[str, Any], definitions: Mapping[str, Any], where: str) -> dict[str, Any]:
    name = str(node["$ref"]).rsplit("/", 1)[-1]
    if name not in definitions:
        raise CrdSchemaError(f"{where}: unknown reference {node['$ref']!r}")
    siblings = {key: value for key, value in node.items() if key != "$ref"}
    return {**definitions[name], **siblings}

"""Validate BottlerocketUpdatePolicy objects against the policy CRD's schema, as the
kube-apiserver would (strict: a field the schema does not declare is refused, as a strict
`kubectl apply` refuses it)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import jsonschema

from brupop.cli.crd.policy_definition import policy_custom_resource_definition
from tests.deploy.shadow_schema import OBJECT_ENVELOPE, openapi_to_json_schema


@functools.cache
def policy_validator() -> jsonschema.Draft202012Validator:
    """A validator for whole BottlerocketUpdatePolicy objects."""
    (version,) = policy_custom_resource_definition()["spec"]["versions"]
    schema = openapi_to_json_schema(version["schema"]["openAPIV3Schema"], strict=True)
    schema["properties"] = {**OBJECT_ENVELOPE, **schema["properties"]}
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def policy_problems(obj: Mapping[str, Any]) -> list[str]:
    """Why the apiserver would refuse `obj`; empty when it fits."""
    return [
        f"{'.'.join(map(str, error.absolute_path)) or '<object>'}: {error.message}"
        for error in policy_validator().iter_errors(obj)
    ]

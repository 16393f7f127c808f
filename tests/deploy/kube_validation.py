"""Validation of rendered documents: Kubernetes kinds against kubernetes-validate's bundled strict
schemas, cert-manager kinds against cert_manager_schema.

`kubernetes_validate.validate` re-reads a 1.2 MB definitions file on every call (about 40 ms a
document); `kubernetes_problems` builds the same validator from the same bundled files once per
version and kind. A test checks that both give the same verdicts.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import jsonschema
import kubernetes_validate
from kubernetes_validate import utils
from referencing import Registry, Resource

from tests.deploy.cert_manager_schema import CERT_MANAGER_SCHEMAS

OLDEST_SUPPORTED = (1, 28)


@functools.cache
def kubernetes_versions() -> tuple[str, ...]:
    """Every Kubernetes minor kubernetes-validate bundles, from the oldest brupop supports."""
    minors = {tuple(int(part) for part in v.split(".")[:2]) for v in utils.all_versions()}
    return tuple(
        f"{major}.{minor}.0"
        for major, minor in sorted(minors)
        if (major, minor) >= OLDEST_SUPPORTED
    )


@functools.cache
def _definitions(version: str) -> Resource[Any]:
    return Resource.from_contents(
        utils.schema_contents(
            f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version
        )
    )


@functools.cache
def _validator(version: str, api_version: str, kind: str) -> jsonschema.Draft202012Validator | None:
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    name = f"kubernetes-json-schema/v{version}-local-strict/{kind.lower()}-{group_version}.json"
    try:
        schema = utils.schema_contents(name, version)
    except FileNotFoundError:
        return None
    registry: Registry[Any] = _definitions(version) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def kubernetes_problems(doc: dict[str, Any], version: str) -> list[str] | None:
    """What `version`'s strict schema refuses in `doc`; None when it has no schema for the kind."""
    validator = _validator(version, doc["apiVersion"], doc["kind"])
    if validator is None:
        return None
    return [
        f"{doc['kind']}/{doc['metadata']['name']} "
        f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(doc)
    ]


def library_verdict(doc: dict[str, Any], version: str) -> bool | None:
    """kubernetes-validate's own answer: valid, invalid, or None for an unknown kind."""
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.SchemaNotFoundError:
        return None
    except kubernetes_validate.ValidationError:
        return False
    return True


def cert_manager_problems(doc: dict[str, Any]) -> list[str] | None:
    """What the cert-manager schema refuses in `doc`; None when it is no cert-manager kind."""
    schema = CERT_MANAGER_SCHEMAS.get((doc["apiVersion"], doc["kind"]))
    if schema is None:
        return None
    validator = jsonschema.Draft202012Validator(schema)
    return [
        f"{doc['kind']}/{doc['metadata']['name']} "
        f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(doc)
    ]

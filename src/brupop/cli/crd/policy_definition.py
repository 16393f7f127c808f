"""The BottlerocketUpdatePolicy CustomResourceDefinition: one version (v1), status subresource.

Both schemas are generated from the domain models: the spec as the models accept it (every
field optional, bounded), the status as the controller writes it. The schema refuses what it
can express (types, ranges, lengths, enums; unknown fields are pruned, or refused by a strict
`kubectl apply`); selector, matcher and URL syntax are checked when the controller reads it.
"""

from __future__ import annotations

from typing import Any

from brupop.cli.crd.schema import crd_version, structural_schema
from brupop.domain.policy.update_policy import KIND, UpdatePolicySpec
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.shadow import API_GROUP

PLURAL = "bottlerocketupdatepolicies"
VERSION = "v1"
CRD_NAME = f"{PLURAL}.{API_GROUP}"
SHORT_NAMES = ["brp"]

_DESCRIPTION = (
    "How brupop rolls updates out in this namespace; only the object named `default` counts. "
    "spec is written by people, status by the leading controller."
)
# (column name, JSON path, column type)
_COLUMNS = (
    ("Phase", ".status.phase", "string"),
    ("Message", ".status.message", "string"),
    ("Age", ".metadata.creationTimestamp", "date"),
)


def policy_custom_resource_definition() -> dict[str, Any]:
    """The policy CRD object, ready to dump as YAML (it does not depend on the namespace)."""
    properties = {
        "spec": structural_schema(UpdatePolicySpec, mode="validation", required="declared"),
        "status": structural_schema(UpdatePolicyStatus, required="declared"),
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": API_GROUP,
            "names": {
                "kind": KIND,
                "plural": PLURAL,
                "singular": KIND.lower(),
                "shortNames": SHORT_NAMES,
            },
            "scope": "Namespaced",
            "versions": [crd_version(VERSION, _DESCRIPTION, _COLUMNS, properties, storage=True)],
        },
    }

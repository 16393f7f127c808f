"""The BottlerocketShadow CustomResourceDefinition: v2 stored, v1 served, converted by webhook.

The conversion webhook is the apiserver's `/crdconvert` behind its Service; cert-manager's CA
injector fills in `caBundle` from the apiserver's serving Certificate, which the manifests create.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from brupop.cli.crd.schema import crd_version, structural_schema
from brupop.cli.crd.v1_models import ShadowSpecV1, ShadowStatusV1
from brupop.domain.shadow import API_GROUP, KIND, ShadowSpec, ShadowStatus
from brupop.entrypoints.pod_namespace import DEFAULT_NAMESPACE

# The brupop-apiserver Service's webhook port (the chart's `apiserver_webhook_port`): the port a
# NetworkPolicy opens to the kube-apiserver, apart from the agents' port.
DEFAULT_APISERVER_SERVICE_PORT = 8444
APISERVER_SERVICE = "brupop-apiserver"
CONVERSION_PATH = "/crdconvert"
SERVING_CERTIFICATE = "brupop-apiserver-certificate"
CA_INJECTION_ANNOTATION = "cert-manager.io/inject-ca-from"
PLURAL = "bottlerocketshadows"
CRD_NAME = f"{PLURAL}.{API_GROUP}"

_DESCRIPTION = (
    "One node's update shadow: spec is the state the controller wants the node to reach next, "
    "status is what the node's agent last observed."
)
# (column name, JSON path, column type); v2 adds the crash count, typed as the integer it is.
_V1_COLUMNS = (
    ("State", ".status.current_state", "string"),
    ("Version", ".status.current_version", "string"),
    ("Target State", ".spec.state", "string"),
    ("Target Version", ".spec.version", "string"),
)
_V2_COLUMNS = (*_V1_COLUMNS, ("Crash Count", ".status.crash_count", "integer"))


def custom_resource_definition(
    namespace: str = DEFAULT_NAMESPACE,
    apiserver_service_port: int = DEFAULT_APISERVER_SERVICE_PORT,
) -> dict[str, Any]:
    """The CRD object for brupop installed in `namespace`, ready to dump as YAML."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": CRD_NAME,
            "annotations": {CA_INJECTION_ANNOTATION: f"{namespace}/{SERVING_CERTIFICATE}"},
        },
        "spec": {
            "group": API_GROUP,
            "names": {
                "kind": KIND,
                "plural": PLURAL,
                "singular": KIND.lower(),
                "shortNames": ["brs"],
            },
            "scope": "Namespaced",
            "versions": [
                _version("v2", ShadowSpec, ShadowStatus, _V2_COLUMNS, storage=True),
                _version("v1", ShadowSpecV1, ShadowStatusV1, _V1_COLUMNS, storage=False),
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {
                        "service": {
                            "name": APISERVER_SERVICE,
                            "namespace": namespace,
                            "path": CONVERSION_PATH,
                            "port": apiserver_service_port,
                        }
                    },
                    "conversionReviewVersions": ["v1"],
                },
            },
        },
    }


def _version(
    name: str,
    spec: type[BaseModel],
    status: type[BaseModel],
    columns: tuple[tuple[str, str, str], ...],
    *,
    storage: bool,
) -> dict[str, Any]:
    properties = {
        "spec": structural_schema(spec),
        "status": {**structural_schema(status), "nullable": True},
    }
    return crd_version(name, _DESCRIPTION, columns, properties, storage=storage, required=["spec"])

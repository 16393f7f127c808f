"""What cert-manager needs from kube-apiserver: its CRDs, and admission webhook
configurations that send cert-manager's resources to its webhook on 127.0.0.1."""

from __future__ import annotations

import base64
import functools
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from tests.support.polling import wait_until

WEBHOOK_NAME = "cert-manager-webhook"
GROUPS = ["cert-manager.io", "acme.cert-manager.io"]
CRD_SECONDS = 60.0
TIMEOUT_SECONDS = 10


def admin(kubeconfig: Path) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(kubeconfig))


def apply_crds(kubeconfig: Path, crds: Path) -> None:
    """Create each CRD of the release (kept when present) and wait until all are Established."""
    with admin(kubeconfig) as api:
        extensions = client.ApiextensionsV1Api(api)
        documents = [doc for doc in yaml.safe_load_all(crds.read_text()) if doc]
        for crd in documents:
            try:
                extensions.create_custom_resource_definition(crd)
            except ApiException as error:
                if error.status != 409:
                    raise
        for crd in documents:
            name = crd["metadata"]["name"]
            wait_until(
                functools.partial(established, extensions, name),
                f"CRD {name} established",
                seconds=CRD_SECONDS,
                interval=0.2,
            )


def established(extensions: client.ApiextensionsV1Api, name: str) -> bool:
    conditions = extensions.read_custom_resource_definition(name).status.conditions or []
    return any(c.type == "Established" and c.status == "True" for c in conditions)


def register_webhooks(kubeconfig: Path, port: int, ca: Path) -> None:
    """Validating (create, update) and mutating (create) webhooks for cert-manager's groups,
    at https://127.0.0.1:<port>, trusted through the control plane's CA; replaced if present."""
    bundle = base64.b64encode(ca.read_bytes()).decode()
    with admin(kubeconfig) as api:
        admission = client.AdmissionregistrationV1Api(api)
        delete_from(admission)
        admission.create_validating_webhook_configuration(
            configuration("ValidatingWebhookConfiguration", port, bundle, "validate")
        )
        admission.create_mutating_webhook_configuration(
            configuration("MutatingWebhookConfiguration", port, bundle, "mutate")
        )


def configuration(kind: str, port: int, bundle: str, path: str) -> dict[str, Any]:
    operations = ["CREATE", "UPDATE"] if path == "validate" else ["CREATE"]
    webhook = {
        "name": "webhook.cert-manager.io",
        "clientConfig": {"url": f"https://127.0.0.1:{port}/{path}", "caBundle": bundle},
        "rules": [
            {
                "apiGroups": GROUPS,
                "apiVersions": ["v1"],
                "operations": operations,
                "resources": ["*/*"],
            }
        ],
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "timeoutSeconds": TIMEOUT_SECONDS,
        "matchPolicy": "Equivalent",
    }
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": WEBHOOK_NAME},
        "webhooks": [webhook],
    }


def delete_webhooks(kubeconfig: Path) -> None:
    with admin(kubeconfig) as api:
        delete_from(client.AdmissionregistrationV1Api(api))


def delete_from(admission: client.AdmissionregistrationV1Api) -> None:
    """Both configurations gone; an absent one is fine."""
    for delete in (
        admission.delete_validating_webhook_configuration,
        admission.delete_mutating_webhook_configuration,
    ):
        try:
            delete(WEBHOOK_NAME)
        except ApiException as error:
            if error.status != 404:
                raise

"""Install both CRDs on a live cluster, the shadow's conversion webhook at a given URL.

For a cluster brupop did not deploy with its chart: `brupop simulate --kubeconfig` and the
real-cluster tests run brupop's apiserver outside the cluster (on loopback), so the webhook is
a `url` with the `caBundle` of its serving CA, not the chart's Service and cert-manager.
"""

from __future__ import annotations

import base64
import time
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from brupop.cli.crd.definition import CA_INJECTION_ANNOTATION, custom_resource_definition
from brupop.cli.crd.policy_definition import policy_custom_resource_definition
from brupop.domain.shadow import DEFAULT_NAMESPACE

ESTABLISHED_SECONDS = 30.0


class CrdInstallError(RuntimeError):
    """A CRD was refused, or did not become Established in time; the message says which."""


def webhook_crds(
    webhook_url: str, ca_bundle: bytes, namespace: str = DEFAULT_NAMESPACE
) -> list[dict[str, Any]]:
    """Both CRD objects, the shadow's webhook pointing at `webhook_url`, trusting `ca_bundle`
    (PEM); the policy CRD as the chart installs it."""
    shadow = custom_resource_definition(namespace)
    shadow["metadata"]["annotations"].pop(CA_INJECTION_ANNOTATION, None)
    webhook = shadow["spec"]["conversion"]["webhook"]
    webhook["clientConfig"] = {
        "url": webhook_url,
        "caBundle": base64.b64encode(ca_bundle).decode(),
    }
    return [shadow, policy_custom_resource_definition()]


def install_crds(
    api_client: client.ApiClient,
    webhook_url: str,
    ca_bundle: bytes,
    *,
    established_seconds: float = ESTABLISHED_SECONDS,
) -> None:
    """Create (or replace) both CRDs and wait until the apiserver serves them."""
    extensions = client.ApiextensionsV1Api(api_client)
    for crd in webhook_crds(webhook_url, ca_bundle):
        name = crd["metadata"]["name"]
        try:
            _create_or_replace(extensions, name, crd)
        except ApiException as error:
            raise CrdInstallError(f"CRD {name} refused: {error.status} {error.reason}") from None
        _wait_established(extensions, name, established_seconds)


def _create_or_replace(
    extensions: client.ApiextensionsV1Api, name: str, crd: dict[str, Any]
) -> None:
    try:
        extensions.create_custom_resource_definition(crd)
    except ApiException as error:
        if error.status != 409:
            raise
        current = extensions.read_custom_resource_definition(name)
        crd["metadata"]["resourceVersion"] = current.metadata.resource_version
        extensions.replace_custom_resource_definition(name, crd)


def _wait_established(extensions: client.ApiextensionsV1Api, name: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        conditions = extensions.read_custom_resource_definition(name).status.conditions or []
        if any(c.type == "Established" and c.status == "True" for c in conditions):
            return
        time.sleep(0.1)
    raise CrdInstallError(f"CRD {name} not Established after {seconds:.0f} s")

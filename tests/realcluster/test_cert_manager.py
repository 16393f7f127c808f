"""cert-manager built from its module and started as host processes beside the control plane
(what `up --real-nodes` does): the chart's Issuers and Certificates become Ready, cainjector
puts the CA into the brs CRD's conversion webhook, and kube-apiserver calls cert-manager's
admission webhook on loopback. A control plane of its own: the CRD here has its webhook."""

from __future__ import annotations

import base64
import functools
import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from tests.realcluster.conftest import SCRIPT
from tests.support.control_plane import cert_manager
from tests.support.control_plane.cert_manager_build import CertManagerCache, build_cert_manager
from tests.support.control_plane.chart_install import NAMESPACE, chart_documents
from tests.support.control_plane.processes import reap_exited
from tests.support.control_plane.versions import default_cache
from tests.support.polling import wait_until

GROUP, VERSION = "cert-manager.io", "v1"
SHADOW_CRD = "bottlerocketshadows.brupop.bottlerocket.aws"
APISERVER_SECRET = "brupop-apiserver-certificate"
# The module's first test also waits for cert-manager's build when the cache has none yet.
pytestmark = pytest.mark.timeout(3600)
ISSUE_SECONDS = 90.0


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[client.ApiClient]:
    """A control plane with cert-manager started in it, and the chart's certificates applied."""
    cache = default_cache()
    if cache.missing():
        pytest.fail(f"{', '.join(cache.missing())} not built: run `scripts/control-plane build`")
    build_cert_manager(CertManagerCache(cache.root))  # once per cache: about 17 min cold
    folder = tmp_path_factory.mktemp("cert-manager")
    started = subprocess.run([SCRIPT, "up", folder], capture_output=True, text=True, timeout=300)
    try:
        assert started.returncode == 0, started.stderr
        cert_manager.start(folder, cache)
        with config.new_client_from_config(config_file=str(folder / "kubeconfig")) as admin:
            apply_chart_certificates(admin)
            yield admin
    finally:
        subprocess.run([SCRIPT, "down", folder], capture_output=True, timeout=120, check=True)
        reap_exited()  # cert-manager's processes, which `down` stopped


def apply_chart_certificates(api: client.ApiClient) -> None:
    """The chart's Namespace, shadow CRD (with its webhook and injection annotation), Issuers
    and Certificates, as its one-file manifest has them."""
    client.CoreV1Api(api).create_namespace(chart_documents("Namespace")[0])
    (shadow_crd,) = [d for d in chart_documents("CustomResourceDefinition") if is_shadow(d)]
    client.ApiextensionsV1Api(api).create_custom_resource_definition(shadow_crd)
    objects = client.CustomObjectsApi(api)
    for kind, plural in (("Issuer", "issuers"), ("Certificate", "certificates")):
        for doc in chart_documents(kind):
            objects.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, plural, doc)


def is_shadow(doc: dict[str, Any]) -> bool:
    return bool(doc["metadata"]["name"] == SHADOW_CRD)


def ready(api: client.ApiClient, plural: str, name: str) -> bool:
    found = client.CustomObjectsApi(api).get_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, plural, name
    )
    conditions = found.get("status", {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def test_the_charts_issuers_and_certificates_become_ready(api: client.ApiClient) -> None:
    for kind, plural in (("Issuer", "issuers"), ("Certificate", "certificates")):
        for doc in chart_documents(kind):
            name = doc["metadata"]["name"]
            wait_until(
                functools.partial(ready, api, plural, name),
                f"{kind} {name} Ready",
                seconds=ISSUE_SECONDS,
                interval=0.5,
            )
    secret = client.CoreV1Api(api).read_namespaced_secret(APISERVER_SECRET, NAMESPACE)
    assert {"tls.crt", "tls.key", "ca.crt"} <= set(secret.data)


def test_cainjector_puts_the_apiserver_certificates_ca_into_the_shadow_crds_webhook(
    api: client.ApiClient,
) -> None:
    extensions = client.ApiextensionsV1Api(api)

    def injected() -> str | None:
        webhook = extensions.read_custom_resource_definition(SHADOW_CRD).spec.conversion.webhook
        return webhook.client_config.ca_bundle if webhook and webhook.client_config else None

    wait_until(injected, f"a CA bundle in {SHADOW_CRD}", seconds=ISSUE_SECONDS, interval=0.5)
    secret = client.CoreV1Api(api).read_namespaced_secret(APISERVER_SECRET, NAMESPACE)
    assert base64.b64decode(injected() or "") == base64.b64decode(secret.data["ca.crt"])


def test_kube_apiserver_sends_cert_managers_resources_to_its_webhook(
    api: client.ApiClient,
) -> None:
    invalid = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Certificate",
        "metadata": {"name": "no-names"},
        "spec": {"secretName": "no-names", "issuerRef": {"name": "selfsigned-issuer"}},
    }
    with pytest.raises(ApiException) as refused:
        client.CustomObjectsApi(api).create_namespaced_custom_object(
            GROUP, VERSION, NAMESPACE, "certificates", invalid
        )
    assert refused.value.status == 403
    message = json.loads(refused.value.body)["message"]
    assert message.startswith('admission webhook "webhook.cert-manager.io" denied the request')

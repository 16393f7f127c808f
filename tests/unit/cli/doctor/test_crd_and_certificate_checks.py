from __future__ import annotations

import base64
import copy

from brupop.cli.crd.definition import custom_resource_definition
from brupop.cli.crd.policy_definition import policy_custom_resource_definition
from brupop.cli.doctor.certificates import check_certificate
from brupop.cli.doctor.crds import CRD_PATH, check_policy_crd, check_shadow_crd
from tests.unit.cli.doctor.fake_cluster import FakeCluster

NS = "brupop-bottlerocket-aws"
SHADOW_CRD = CRD_PATH + "bottlerocketshadows.brupop.bottlerocket.aws"
CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def test_the_shadow_crd_passes_when_installed_as_brupop_crd_generates_it() -> None:
    cluster = FakeCluster({SHADOW_CRD: custom_resource_definition(NS)})
    result = check_shadow_crd(cluster, NS)
    assert result.ok
    assert result.detail == "installed, versions v2 (stored), v1"


def test_a_shadow_crd_that_stores_v1_fails_with_the_versions_it_has() -> None:
    crd = copy.deepcopy(custom_resource_definition(NS))
    for version in crd["spec"]["versions"]:
        version["storage"] = version["name"] == "v1"
    result = check_shadow_crd(FakeCluster({SHADOW_CRD: crd}), NS)
    assert not result.ok
    assert result.detail == "versions v2, v1 (stored), expected v2 (stored), v1"


def test_a_shadow_crd_without_its_webhook_conversion_fails() -> None:
    crd = copy.deepcopy(custom_resource_definition(NS))
    crd["spec"]["conversion"] = {"strategy": "None"}
    result = check_shadow_crd(FakeCluster({SHADOW_CRD: crd}), NS)
    assert not result.ok
    assert result.detail == "conversion strategy None, expected Webhook"


def test_the_policy_crd_passes_when_installed_as_brupop_crd_generates_it() -> None:
    crd = policy_custom_resource_definition()
    cluster = FakeCluster({CRD_PATH + crd["metadata"]["name"]: crd})
    assert check_policy_crd(cluster).detail == "installed, versions v1 (stored)"


def test_a_missing_policy_crd_fails_and_says_how_to_install_it() -> None:
    result = check_policy_crd(FakeCluster())
    assert (result.ok, result.detail) == (False, "not installed")
    assert result.advice.startswith("brupop crd | kubectl apply -f -")


def _certificate_cluster(ready: str, bundle: bytes) -> FakeCluster:
    crd = copy.deepcopy(custom_resource_definition(NS))
    client_config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
    client_config["caBundle"] = base64.b64encode(bundle).decode()
    return FakeCluster(
        {
            CRD_PATH + "certificates.cert-manager.io": {},
            f"/apis/cert-manager.io/v1/namespaces/{NS}/certificates/brupop-apiserver-certificate": {
                "spec": {"secretName": "brupop-apiserver-certificate"},
                "status": {"conditions": [{"type": "Ready", "status": ready, "message": "m"}]},
            },
            f"/api/v1/namespaces/{NS}/secrets/brupop-apiserver-certificate": {
                "data": {"ca.crt": base64.b64encode(CA).decode()}
            },
            SHADOW_CRD: crd,
        }
    )


def test_the_certificate_passes_when_ready_and_the_crd_carries_its_ca() -> None:
    assert check_certificate(_certificate_cluster("True", CA), NS).ok


def test_a_certificate_not_ready_fails_with_its_message() -> None:
    result = check_certificate(_certificate_cluster("False", CA), NS)
    assert (result.ok, result.detail) == (False, "brupop-apiserver-certificate is not Ready: m")


def test_a_crd_carrying_another_ca_fails_naming_the_cainjector() -> None:
    result = check_certificate(_certificate_cluster("True", b"other"), NS)
    assert not result.ok
    assert "cainjector" in result.advice


def test_without_cert_manager_the_certificate_check_says_so_and_how_to_install_it() -> None:
    result = check_certificate(FakeCluster(), NS)
    assert (result.ok, result.detail) == (False, "cert-manager is not installed")
    assert result.advice.startswith("install cert-manager")

"""Every document of the manifest validates: Kubernetes kinds for each supported minor, strictly;
cert-manager kinds against their schema; and the cert-manager objects refer to each other."""

from __future__ import annotations

import copy

import pytest

from tests.deploy.cert_manager_schema import CERT_MANAGER_SCHEMAS
from tests.deploy.kube_validation import (
    cert_manager_problems,
    kubernetes_problems,
    kubernetes_versions,
    library_verdict,
)
from tests.deploy.rendering import Rendered


def test_validation_covers_kubernetes_1_28_up_to_the_newest_bundled_minor() -> None:
    versions = kubernetes_versions()
    assert versions[0] == "1.28.0"
    assert len(versions) >= 10  # kubernetes-validate 1.37 bundles up to 1.37


@pytest.mark.parametrize("version", kubernetes_versions())
def test_every_kubernetes_document_validates_strictly(version: str, manifest: Rendered) -> None:
    unchecked = []
    problems = []
    for doc in manifest:
        found = kubernetes_problems(doc, version)
        if found is None:
            unchecked.append((doc["apiVersion"], doc["kind"]))
        else:
            problems += found
    assert problems == []
    assert set(unchecked) == set(CERT_MANAGER_SCHEMAS), "only cert-manager kinds lack a schema"


def test_the_validator_catches_an_unknown_field() -> None:
    deployment = _deployment_with_a_typo()
    assert kubernetes_problems(deployment, "1.28.0") != []


def _deployment_with_a_typo() -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}], "image_pull_secrets": []},
            },
        },
    }


def test_the_cached_validator_agrees_with_kubernetes_validate(manifest: Rendered) -> None:
    version = kubernetes_versions()[-1]
    one_per_kind = {(doc["apiVersion"], doc["kind"]): doc for doc in manifest}
    for doc in [*one_per_kind.values(), _deployment_with_a_typo()]:
        problems = kubernetes_problems(doc, version)
        expected = library_verdict(doc, version)
        assert (None if problems is None else problems == []) == expected, doc["metadata"]


def test_cert_manager_documents_fit_the_cert_manager_schema(manifest: Rendered) -> None:
    docs = [doc for doc in manifest if (doc["apiVersion"], doc["kind"]) in CERT_MANAGER_SCHEMAS]
    assert len(docs) == 5
    assert [cert_manager_problems(doc) for doc in docs] == [[]] * len(docs)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("secretName", ...),
        ("issuerRef", ...),
        ("usages", ["server-auth"]),
        ("privateKey", {"algorithm": "rsa"}),
        ("dnsName", ["brupop-apiserver"]),
    ],
)
def test_the_cert_manager_schema_catches_mistakes(
    field: str, value: object, manifest: Rendered
) -> None:
    certificate = copy.deepcopy(manifest.get("Certificate", "brupop-apiserver-certificate"))
    if value is ...:
        del certificate["spec"][field]
    else:
        certificate["spec"][field] = value
    assert cert_manager_problems(certificate) != []


def test_every_certificate_is_issued_by_an_issuer_of_the_manifest(manifest: Rendered) -> None:
    for certificate in manifest.of_kind("Certificate"):
        reference = certificate["spec"]["issuerRef"]
        assert reference["kind"] == "Issuer"
        assert manifest.find("Issuer", reference["name"]) is not None


def test_the_ca_issuer_signs_with_the_self_signed_ca_certificates_secret(
    manifest: Rendered,
) -> None:
    ca = manifest.get("Certificate", "brupop-selfsigned-ca")
    assert ca["spec"]["isCA"] is True
    assert manifest.get("Issuer", ca["spec"]["issuerRef"]["name"])["spec"] == {"selfSigned": {}}
    issuer = manifest.get("Issuer", "brupop-root-certificate-issuer")
    assert issuer["spec"]["ca"]["secretName"] == ca["spec"]["secretName"]


def test_the_serving_certificate_names_the_apiserver_service(manifest: Rendered) -> None:
    serving = manifest.get("Certificate", "brupop-apiserver-certificate")["spec"]
    assert "server auth" in serving["usages"]
    assert serving["dnsNames"] == [
        "brupop-apiserver.brupop-bottlerocket-aws.svc",
        "brupop-apiserver.brupop-bottlerocket-aws.svc.cluster.local",
    ]

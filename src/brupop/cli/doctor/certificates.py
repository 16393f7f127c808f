"""cert-manager's serving Certificate for the apiserver: Ready, and the CA it was issued by is
the one cert-manager's CA injector put in the shadow CRD's conversion webhook."""

from __future__ import annotations

import base64
import binascii

from brupop.cli.crd.definition import CRD_NAME, SERVING_CERTIFICATE
from brupop.cli.doctor.crds import CRD_PATH
from brupop.cli.doctor.reading import JSON, ClusterReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed

CHECK = "certificate"
CERT_MANAGER_CRD = "certificates.cert-manager.io"
CERT_MANAGER_ADVICE = (
    "install cert-manager (kubectl apply -f https://github.com/cert-manager/cert-manager/"
    "releases/latest/download/cert-manager.yaml), then the chart"
)


def check_certificate(reader: ClusterReader, namespace: str) -> DoctorFinding:
    """Ready, and its Secret's `ca.crt` equals the CRD webhook's `caBundle`."""
    try:
        reader.get(CRD_PATH + CERT_MANAGER_CRD)
    except ReadRefused as error:
        if error.status == 404:
            return failed(CHECK, "cert-manager is not installed", CERT_MANAGER_ADVICE)
        return failed(CHECK, f"cannot read the CRD {CERT_MANAGER_CRD} ({error})", "kubectl get crd")
    path = f"/apis/cert-manager.io/v1/namespaces/{namespace}/certificates/{SERVING_CERTIFICATE}"
    try:
        certificate = reader.get(path)
    except ReadRefused as error:
        return failed(
            CHECK,
            f"cannot read Certificate {namespace}/{SERVING_CERTIFICATE} ({error})",
            "install the chart (its Certificates and Issuers)",
        )
    ready = _condition(certificate, "Ready")
    if ready is None or ready.get("status") != "True":
        why = (ready or {}).get("message", "no Ready condition yet")
        return failed(
            CHECK,
            f"{SERVING_CERTIFICATE} is not Ready: {why}",
            f"kubectl -n {namespace} describe certificate {SERVING_CERTIFICATE}",
        )
    return _bundle_matches(reader, namespace, certificate)


def _condition(obj: JSON, kind: str) -> JSON | None:
    for condition in obj.get("status", {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == kind:
            return condition
    return None


def _bundle_matches(reader: ClusterReader, namespace: str, certificate: JSON) -> DoctorFinding:
    secret_name = certificate.get("spec", {}).get("secretName", SERVING_CERTIFICATE)
    try:
        secret = reader.get(f"/api/v1/namespaces/{namespace}/secrets/{secret_name}")
        crd = reader.get(CRD_PATH + CRD_NAME)
    except ReadRefused as error:
        return failed(
            CHECK,
            f"Ready, but the CA cannot be compared ({error})",
            "kubectl auth can-i get secrets",
        )
    issued = _decoded(secret.get("data", {}).get("ca.crt"))
    webhook = crd.get("spec", {}).get("conversion", {}).get("webhook") or {}
    bundle = _decoded(webhook.get("clientConfig", {}).get("caBundle"))
    if not issued or issued != bundle:
        return failed(
            CHECK,
            f"Ready, but the shadow CRD's caBundle is not the CA in Secret {secret_name}",
            "check that cert-manager's cainjector runs and the CRD keeps its "
            "cert-manager.io/inject-ca-from annotation",
        )
    return passed(CHECK, f"{SERVING_CERTIFICATE} Ready; the CRD's caBundle matches its CA")


def _decoded(value: object) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True).strip()
    except (binascii.Error, ValueError):
        return b""

"""The shadow's conversion webhook, called for real.

A v1 list can be served from kube-apiserver's watch cache without reaching the webhook, so a
list that answers proves nothing. Doctor sends the webhook a ConversionReview of one sample
shadow through its Service's proxy (when the CRD names a Service), and reads one stored shadow
by name as v1, which kube-apiserver converts through the webhook. Either one failing fails the
check; nothing is written.
"""

from __future__ import annotations

from typing import NamedTuple

from brupop.cli.crd.definition import CRD_NAME, PLURAL
from brupop.cli.doctor.crds import CRD_PATH
from brupop.cli.doctor.reading import JSON, ClusterReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed
from brupop.domain.shadow import API_GROUP

CHECK = "conversion webhook"
REVIEW_UID = "brupop-doctor-review"
SAMPLE_NAME = "brs-brupop-doctor-sample"


class WebhookService(NamedTuple):
    """Where the CRD sends its ConversionReviews: a Service's port and path."""

    namespace: str
    name: str
    port: int
    path: str

    def proxy_path(self) -> str:
        """The Service proxy's path to the webhook (https, as kube-apiserver calls it)."""
        return (
            f"/api/v1/namespaces/{self.namespace}/services/https:{self.name}:{self.port}"
            f"/proxy{self.path}"
        )

    def __str__(self) -> str:
        return f"Service {self.namespace}/{self.name}:{self.port}{self.path}"


def check_conversion_webhook(reader: ClusterReader, namespace: str) -> DoctorFinding:
    """The webhook converts a sample shadow sent through its Service, and a stored shadow
    read as v1; the failure says which and what to look at."""
    advice = (
        f"check the apiserver pods and their certificate: kubectl -n {namespace} get "
        f"pods,endpoints,certificate; kubectl get crd {CRD_NAME} -o jsonpath='{{.spec.conversion}}'"
    )
    try:
        crd = reader.get(CRD_PATH + CRD_NAME)
    except ReadRefused as error:
        return failed(CHECK, f"cannot read the CRD {CRD_NAME} ({error})", advice)
    strategy = (crd.get("spec", {}).get("conversion") or {}).get("strategy", "None")
    if strategy != "Webhook":  # the CRD's own check says so, and what to do
        detail = f"needs crd {CRD_NAME} to convert by Webhook (its strategy is {strategy})"
        return DoctorFinding(CHECK, False, detail, skipped=True)
    done: list[str] = []
    service = webhook_service(crd)
    if service is not None:
        refused = _review(reader, service, namespace)
        if refused is not None:
            return failed(CHECK, refused, advice)
        done.append(f"converted a sample shadow sent through {service}")
    try:
        done.append(_read_one_as_v1(reader, namespace))
    except ReadRefused as error:
        return failed(CHECK, str(error), advice)
    return passed(CHECK, "; ".join(done))


def webhook_service(crd: JSON) -> WebhookService | None:
    """The Service the CRD's conversion webhook names (None: a URL, or no webhook)."""
    conversion = crd.get("spec", {}).get("conversion") or {}
    config = (conversion.get("webhook") or {}).get("clientConfig") or {}
    service = config.get("service")
    if not isinstance(service, dict) or not service.get("name"):
        return None
    port = service.get("port", 443)
    return WebhookService(
        str(service.get("namespace", "")),
        str(service["name"]),
        port if isinstance(port, int) else 443,
        str(service.get("path") or "/"),
    )


def _review(reader: ClusterReader, service: WebhookService, namespace: str) -> str | None:
    """Why the webhook did not convert the sample shadow; None when it did."""
    sample = {
        "apiVersion": f"{API_GROUP}/v2",
        "kind": "BottlerocketShadow",
        "metadata": {"name": SAMPLE_NAME, "namespace": namespace},
        "spec": {"state": "Idle"},
    }
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": REVIEW_UID,
            "desiredAPIVersion": f"{API_GROUP}/v1",
            "objects": [sample],
        },
    }
    try:
        answer = reader.post(service.proxy_path(), review)
    except ReadRefused as error:
        return f"a ConversionReview sent through {service} failed ({error})"
    response = answer.get("response")
    if not isinstance(response, dict):
        return f"{service} answered without a ConversionReview response"
    converted = response.get("convertedObjects")
    status = (response.get("result") or {}).get("status")
    ok = (
        response.get("uid") == REVIEW_UID
        and status == "Success"
        and isinstance(converted, list)
        and len(converted) == 1
        and isinstance(converted[0], dict)
        and converted[0].get("apiVersion") == f"{API_GROUP}/v1"
    )
    return None if ok else f"{service} answered a ConversionReview without a v1 shadow"


def _read_one_as_v1(reader: ClusterReader, namespace: str) -> str:
    """Read one stored shadow by name as v1 (kube-apiserver converts it through the webhook);
    what was done. ReadRefused names the shadow when that read fails."""
    base = f"/apis/{API_GROUP}/{{version}}/namespaces/{namespace}/{PLURAL}"
    try:
        listed = reader.get(base.format(version="v2"), {"limit": "1"})
    except ReadRefused as error:
        raise ReadRefused(error.status, f"cannot list shadows ({error})") from None
    items = [item for item in listed.get("items") or [] if isinstance(item, dict)]
    name = items[0].get("metadata", {}).get("name") if items else None
    if not isinstance(name, str) or not name:
        return "no shadow stored yet to read as v1"
    try:
        reader.get(f"{base.format(version='v1')}/{name}")
    except ReadRefused as error:
        raise ReadRefused(error.status, f"reading {name} as v1 failed ({error})") from None
    return f"{name} read as v1"

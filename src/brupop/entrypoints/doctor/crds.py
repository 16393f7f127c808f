"""The CRDs: both installed with the versions `brupop crd` generates (the shadow's v2 stored,
v1 served), and the shadow's conversion webhook answering through kube-apiserver."""

from __future__ import annotations

from brupop.domain.shadow import API_GROUP
from brupop.entrypoints.crd.definition import PLURAL, custom_resource_definition
from brupop.entrypoints.crd.policy_definition import policy_custom_resource_definition
from brupop.entrypoints.doctor.reading import JSON, ClusterReader, ReadRefused
from brupop.entrypoints.doctor.result import CheckResult, failed, passed

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
INSTALL_ADVICE = "brupop crd | kubectl apply -f - (or install the chart)"


def served_versions(crd: JSON) -> list[tuple[str, bool, bool]]:
    """Each version's (name, served, storage), in the CRD's order."""
    versions = crd.get("spec", {}).get("versions") or []
    return [
        (str(v.get("name")), bool(v.get("served")), bool(v.get("storage")))
        for v in versions
        if isinstance(v, dict)
    ]


def _crd_check(reader: ClusterReader, expected: JSON) -> CheckResult:
    name = expected["metadata"]["name"]
    check = f"crd {name}"
    try:
        installed = reader.get(CRD_PATH + name)
    except ReadRefused as error:
        if error.status == 404:
            return failed(check, "not installed", INSTALL_ADVICE)
        return failed(check, f"cannot read it ({error})", "kubectl get crd " + name)
    want, have = served_versions(expected), served_versions(installed)
    if sorted(want) != sorted(have):
        return failed(
            check,
            f"versions {_shown(have)}, expected {_shown(want)}",
            INSTALL_ADVICE + " to install this version's CRD",
        )
    want_strategy = expected["spec"].get("conversion", {}).get("strategy", "None")
    have_strategy = installed["spec"].get("conversion", {}).get("strategy", "None")
    if want_strategy != have_strategy:
        return failed(
            check, f"conversion strategy {have_strategy}, expected {want_strategy}", INSTALL_ADVICE
        )
    return passed(check, f"installed, versions {_shown(have)}")


def _shown(versions: list[tuple[str, bool, bool]]) -> str:
    return ", ".join(
        f"{name}{' (stored)' if storage else ''}{'' if served else ' (not served)'}"
        for name, served, storage in versions
    )


def check_shadow_crd(reader: ClusterReader, namespace: str) -> CheckResult:
    """The BottlerocketShadow CRD as `brupop crd` generates it."""
    return _crd_check(reader, custom_resource_definition(namespace))


def check_policy_crd(reader: ClusterReader) -> CheckResult:
    """The BottlerocketUpdatePolicy CRD as `brupop crd` generates it."""
    return _crd_check(reader, policy_custom_resource_definition())


def check_conversion_webhook(reader: ClusterReader, namespace: str) -> CheckResult:
    """Read shadows as v1: kube-apiserver converts them through the webhook, and answers 500
    when the webhook is unreachable or refuses."""
    check = "conversion webhook"
    path = f"/apis/{API_GROUP}/v1/namespaces/{namespace}/{PLURAL}"
    try:
        listed = reader.get(path, {"limit": "1"})
    except ReadRefused as error:
        return failed(
            check,
            f"reading shadows as v1 failed ({error})",
            f"check the apiserver pods and their certificate: kubectl -n {namespace} "
            "get pods,certificate; kubectl get crd bottlerocketshadows.brupop.bottlerocket.aws "
            "-o jsonpath='{.spec.conversion}'",
        )
    if not listed.get("items"):
        return passed(check, "the v1 list answered (no shadow yet, so nothing was converted)")
    return passed(check, "a shadow read as v1 was converted")

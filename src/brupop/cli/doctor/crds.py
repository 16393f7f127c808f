"""The CRDs: both installed with the versions `brupop crd` generates (the shadow's v2 stored,
v1 served, converted by webhook: `webhook` checks that one)."""

from __future__ import annotations

from brupop.cli.crd.definition import custom_resource_definition
from brupop.cli.crd.policy_definition import policy_custom_resource_definition
from brupop.cli.doctor.reading import JSON, ClusterReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed

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


def _crd_check(reader: ClusterReader, expected: JSON) -> DoctorFinding:
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
            blocks=False,  # it is there: what reads its objects can still be checked
        )
    want_strategy = expected["spec"].get("conversion", {}).get("strategy", "None")
    have_strategy = installed["spec"].get("conversion", {}).get("strategy", "None")
    if want_strategy != have_strategy:
        return failed(
            check,
            f"conversion strategy {have_strategy}, expected {want_strategy}",
            INSTALL_ADVICE,
            blocks=False,
        )
    return passed(check, f"installed, versions {_shown(have)}")


def _shown(versions: list[tuple[str, bool, bool]]) -> str:
    return ", ".join(
        f"{name}{' (stored)' if storage else ''}{'' if served else ' (not served)'}"
        for name, served, storage in versions
    )


def check_shadow_crd(reader: ClusterReader, namespace: str) -> DoctorFinding:
    """The BottlerocketShadow CRD as `brupop crd` generates it."""
    return _crd_check(reader, custom_resource_definition(namespace))


def check_policy_crd(reader: ClusterReader) -> DoctorFinding:
    """The BottlerocketUpdatePolicy CRD as `brupop crd` generates it."""
    return _crd_check(reader, policy_custom_resource_definition())

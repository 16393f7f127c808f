"""brupop's namespace, the NetworkPolicies the chart installs, and the `default` update policy,
read and parsed as the controller parses it."""

from __future__ import annotations

from brupop.adapters.kubernetes.resources.update_policies import PLURAL, VERSION
from brupop.cli.doctor.reading import ClusterReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed
from brupop.domain.policy.policy_object import PolicyObjectError, policy_from_object
from brupop.domain.shadow import API_GROUP

NETWORK_POLICIES = ("brupop-apiserver", "brupop-controller")


def check_namespace(reader: ClusterReader, namespace: str) -> DoctorFinding:
    """brupop's namespace exists (everything else of the chart lives in it)."""
    check = "namespace"
    try:
        reader.get(f"/api/v1/namespaces/{namespace}")
    except ReadRefused as error:
        if error.status == 404:
            return failed(
                check,
                f"{namespace} does not exist: brupop is not installed there",
                f"install the chart in namespace {namespace}, or pass --namespace",
            )
        return failed(check, f"cannot read {namespace} ({error})", "kubectl get namespaces")
    return passed(check, f"{namespace} exists")


def check_network_policies(reader: ClusterReader, namespace: str) -> DoctorFinding:
    """Each of the chart's NetworkPolicies exists in brupop's namespace."""
    check = "network policies"
    path = f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies"
    try:
        listed = reader.get(path)
    except ReadRefused as error:
        return failed(check, f"cannot list them ({error})", f"kubectl -n {namespace} get netpol")
    present = {
        item.get("metadata", {}).get("name")
        for item in listed.get("items") or []
        if isinstance(item, dict)
    }
    missing = [name for name in NETWORK_POLICIES if name not in present]
    if missing:
        return failed(
            check,
            f"missing {', '.join(missing)}",
            "helm upgrade with --set network_policy.enabled=true (the chart's default)",
        )
    return passed(check, f"{', '.join(NETWORK_POLICIES)} present")


def check_policy(reader: ClusterReader, namespace: str) -> DoctorFinding:
    """The `default` policy parses with the controller's reader; none at all is a pass."""
    check = "update policy"
    path = f"/apis/{API_GROUP}/{VERSION}/namespaces/{namespace}/{PLURAL}/default"
    try:
        obj = reader.get(path)
    except ReadRefused as error:
        if error.status == 404:
            return passed(check, "no policy object `default`: the controller's defaults apply")
        return failed(check, f"cannot read it ({error})", f"kubectl -n {namespace} get {PLURAL}")
    advice = f"kubectl -n {namespace} edit {PLURAL} default (see docs/policy.md)"
    try:
        policy = policy_from_object(obj)
    except PolicyObjectError as error:
        return failed(check, f"`default` cannot be read: {error}", advice)
    if policy.spec is None:
        return failed(check, f"`default`'s spec cannot be used: {policy.problem}", advice)
    return passed(check, "`default` is valid")

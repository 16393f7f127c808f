"""The apiserver and controller Deployments are available, and a controller leads: the
leader-election Lease has a holder whose renewal is younger than the lease's duration."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.cli.doctor.reading import ClusterReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME

APISERVER = "brupop-apiserver"
CONTROLLER = "brupop-controller-deployment"


def check_deployment(reader: ClusterReader, namespace: str, name: str) -> DoctorFinding:
    """`status.availableReplicas` reaches `spec.replicas` (what the deployment controller
    counts as available)."""
    check = f"deployment {name}"
    try:
        deployment = reader.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
    except ReadRefused as error:
        if error.status == 404:
            return failed(check, "not found", f"install the chart in namespace {namespace}")
        return failed(check, f"cannot read it ({error})", f"kubectl -n {namespace} get deploy")
    wanted = deployment.get("spec", {}).get("replicas", 1)
    available = deployment.get("status", {}).get("availableReplicas") or 0
    detail = f"{available}/{wanted} replicas available"
    if not isinstance(wanted, int) or not isinstance(available, int) or available < wanted:
        return failed(
            check,
            detail,
            f"kubectl -n {namespace} describe deployment {name}; kubectl -n {namespace} get pods",
        )
    return passed(check, detail)


def check_leader(reader: ClusterReader, namespace: str, now: datetime) -> DoctorFinding:
    """A holder, renewed within `leaseDurationSeconds` of `now`."""
    check = "controller leader"
    path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{DEFAULT_LEASE_NAME}"
    advice = f"kubectl -n {namespace} logs deploy/brupop-controller-deployment"
    try:
        lease = reader.get(path)
    except ReadRefused as error:
        if error.status == 404:
            return failed(check, f"no Lease {DEFAULT_LEASE_NAME}: no controller ever led", advice)
        return failed(check, f"cannot read Lease {DEFAULT_LEASE_NAME} ({error})", advice)
    spec = lease.get("spec", {})
    holder, renewed = spec.get("holderIdentity"), _time(spec.get("renewTime"))
    duration = spec.get("leaseDurationSeconds")
    if not holder:
        return failed(check, "the Lease has no holder", advice)
    if renewed is None or not isinstance(duration, int):
        return failed(check, f"{holder} holds the Lease without a renew time or duration", advice)
    age = (now - renewed).total_seconds()
    if age > duration:
        return failed(
            check, f"{holder} last renewed {age:.0f} s ago, past its {duration} s lease", advice
        )
    return passed(check, f"{holder} holds the Lease (renewed {max(age, 0):.0f} s ago)")


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

"""The controller's `/metrics` can be scraped: at `--controller-url` when given, else through
the Kubernetes API's service proxy (which kube-apiserver refuses for loopback endpoints)."""

from __future__ import annotations

from brupop.cli.doctor.reading import ClusterReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed
from brupop.cli.status.reaching import ControllerServiceAddress, StatusUnavailable, read_controller

CHECK = "metrics"
METRIC = "brupop_hosts_state"
METRICS_MAX_BYTES = 4_000_000


def check_metrics_at(url: str, timeout: float) -> DoctorFinding:
    """GET `<url>/metrics` and find brupop's metrics in it."""
    target = url.rstrip("/") + "/metrics"
    try:
        text = read_controller(target, timeout, METRICS_MAX_BYTES).decode("utf-8", "replace")
    except StatusUnavailable as error:
        return failed(CHECK, str(error), "check --controller-url")
    return _found(text, target, "check that --controller-url is brupop's controller")


def check_metrics_by_proxy(reader: ClusterReader, namespace: str) -> DoctorFinding:
    """GET the controller Service's `/metrics` through the service proxy."""
    service = ControllerServiceAddress(namespace)
    path = f"/api/v1/namespaces/{namespace}/services/{service.proxy_name}/proxy/metrics"
    try:
        text = reader.get_text(path)
    except ReadRefused as error:
        return failed(
            CHECK,
            f"cannot scrape through the service proxy ({error})",
            f"run `{service.port_forward_hint()}` and pass --controller-url http://127.0.0.1:8080",
        )
    return _found(text, f"Service {namespace}/{service.name}", "check the controller's logs")


def _found(text: str, where: str, advice: str) -> DoctorFinding:
    if METRIC not in text:
        return failed(CHECK, f"{where} answered without {METRIC}", advice)
    return passed(CHECK, f"scraped {where}")

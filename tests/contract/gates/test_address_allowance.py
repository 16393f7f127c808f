"""The address allowance, the same for the in-memory prober and alert source and for the real ones
(the bounded GET): what the default refuses, by name and by the address a name resolves to,
is refused before any connection, with the same reason; what PROBE_ALLOWED_NETWORKS lists is
reached. Names resolve through one table that both sides share (the real side through a
resolver that reads it), so no test depends on a real DNS."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import pytest

from brupop.adapters.http.bounded_get import BoundedGet
from brupop.adapters.http.host_lookup import HostLookups
from brupop.adapters.http.prober import UrlProber
from brupop.adapters.http.prometheus import PrometheusAlertSource
from brupop.adapters.memory.gates import InMemoryAlertSource, InMemoryHttpProber, Reach
from brupop.domain.policy.address_allowance import AddressAllowance
from brupop.domain.policy.update_policy import AlertGateSpec
from brupop.ports.monitoring.alert_source import AlertSource, AlertSourceError
from brupop.ports.monitoring.http_prober import HttpProber
from brupop.services.controller.safety.alert_gate_reader import read_alert_gate

NAMES = {
    "rebound.example": ["10.0.0.7", "169.254.10.1"],  # one refused address refuses the name
    "cloud-metadata.example": ["fd00:ec2::254"],
    "mapped-loopback.example": ["::ffff:127.0.0.1"],
    "allowed.example": ["127.0.0.1"],
    "six-to-four.example": ["10.0.0.7", "2002:a9fe:a9fe::"],
    "teredo.example": ["2001:0:4136:e378:8000:63bf:80ff:fffe"],
}
ALLOWANCE = "allowed.example, 127.0.0.0/8"  # nothing here connects beyond loopback
SUFFIX = " (not allowed by PROBE_ALLOWED_NETWORKS)"
REFUSED = [
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
    ("http://[fd00:ec2::254]/", "fd00:ec2::254 is a cloud metadata address"),
    ("http://metadata.google.internal/", "metadata.google.internal is a cloud metadata service"),
    ("http://127.0.0.1:8080/healthz", "127.0.0.1 is a loopback address"),
    ("http://[::1]:8080/healthz", "::1 is a loopback address"),
    ("http://0.0.0.0:8080/", "0.0.0.0 is an unspecified address"),
    ("http://kubernetes.default.svc/", "kubernetes.default.svc is the cluster's API server"),
    ("http://rebound.example:8080/", "169.254.10.1 is a link-local address"),
    ("http://cloud-metadata.example/", "fd00:ec2::254 is a cloud metadata address"),
    ("http://mapped-loopback.example/", "127.0.0.1 is a loopback address"),
    ("http://192.0.0.192/", "192.0.0.192 is an IETF protocol assignment address"),
    ("http://[2002:a9fe:a9fe::]/", "169.254.169.254 is a cloud metadata address"),
    ("http://six-to-four.example/", "169.254.169.254 is a cloud metadata address"),
    ("http://teredo.example/", "127.0.0.1 is a loopback address"),
]


def _resolve(host: str, port: int) -> Sequence[str]:
    return NAMES[host]


def _real_http(allowance: str) -> BoundedGet:
    return BoundedGet(AddressAllowance.parse(allowance), HostLookups(_resolve))


def _reach(allowance: str) -> Reach:
    return Reach(AddressAllowance.parse(allowance), NAMES)


class Gates(Protocol):
    """A prober and an alert source under an allowance."""

    def prober(self, allowance: str = "") -> HttpProber: ...
    def alerts(self, allowance: str = "") -> AlertSource: ...


class MemoryGates:
    def prober(self, allowance: str = "") -> HttpProber:
        return InMemoryHttpProber(_reach(allowance))

    def alerts(self, allowance: str = "") -> AlertSource:
        return InMemoryAlertSource(_reach(allowance))


class RealGates:
    def prober(self, allowance: str = "") -> HttpProber:
        return UrlProber(_real_http(allowance))

    def alerts(self, allowance: str = "") -> AlertSource:
        return PrometheusAlertSource(_real_http(allowance))


@pytest.fixture(params=["memory", "real"])
def gates(request: pytest.FixtureRequest) -> Gates:
    return MemoryGates() if request.param == "memory" else RealGates()


@pytest.mark.parametrize(("url", "reason"), REFUSED, ids=[url for url, _ in REFUSED])
def test_a_probe_the_default_refuses_gets_the_reason_and_no_status(
    gates: Gates, url: str, reason: str
) -> None:
    answer = gates.prober().probe(url, 1)

    assert answer.status is None
    assert answer.error == f"refused: {reason}{SUFFIX}"


@pytest.mark.parametrize(("url", "reason"), REFUSED, ids=[url for url, _ in REFUSED])
def test_a_prometheus_the_default_refuses_holds_the_gate_with_the_reason(
    gates: Gates, url: str, reason: str
) -> None:
    state = read_alert_gate(gates.alerts(), AlertGateSpec(prometheus_url=url))

    assert state.holds and not state.firing
    assert state.reason == (
        f"Prometheus cannot be asked ({url}: refused: {reason}{SUFFIX}); holding until it answers"
    )


def test_credentials_in_a_url_are_refused_and_not_repeated(gates: Gates) -> None:
    url = "http://admin:s3cret@10.0.0.9:9090"  # the policy's model refuses it first, too

    answer = gates.prober(ALLOWANCE).probe(url + "/healthz", 1)
    with pytest.raises(AlertSourceError) as refused:
        gates.alerts(ALLOWANCE).firing(url, (), (), 1)

    assert answer.error == "refused: credentials do not belong in the URL"
    assert str(refused.value) == (
        "http://***@10.0.0.9:9090: refused: credentials do not belong in the URL"
    )


def test_what_the_allowance_lists_is_not_refused(gates: Gates) -> None:
    for url in ("http://127.0.0.1:1/healthz", "http://allowed.example:1/healthz"):
        error = gates.prober(ALLOWANCE).probe(url, 1).error

        assert error == "connection refused", url


def test_a_url_that_is_not_http_is_refused_the_same_way(gates: Gates) -> None:
    for url in ("ftp://10.0.0.9/", "http://10.0.0.9:port/", "http:///healthz"):
        assert gates.prober().probe(url, 1).error == "not an http(s) URL", url

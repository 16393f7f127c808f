"""Where `brupop apiserver` listens: as the original, on all IPv6 addresses (dual-stack) when the
cluster's API address is IPv6, else on all IPv4 addresses; APISERVER_BIND_ADDRESS overrides."""

from __future__ import annotations

import signal

import pytest

from brupop.entrypoints.apiserver.settings import load_settings
from tests.integration.apiserver.conftest import start_brupop_apiserver
from tests.integration.apiserver.raw_client import read_until_closed, tls_connection
from tests.support.polling import first_answer
from tests.support.tls import TestCertificates

PING = b"GET /ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"


def ping_at(host: str, port: int, certs: TestCertificates) -> bytes:
    with tls_connection(port, certs.ca_path, host=host) as connection:
        connection.sendall(PING)
        return read_until_closed(connection)


def test_an_ipv6_cluster_gets_an_apiserver_reachable_over_ipv6_and_ipv4(
    certs: TestCertificates,
) -> None:
    process, port = start_brupop_apiserver(
        certs, APISERVER_BIND_ADDRESS=None, KUBERNETES_SERVICE_HOST="fd00:10:96::1"
    )
    try:
        over_ipv6 = first_answer(lambda: ping_at("::1", port, certs), "GET /ping over IPv6")
        over_ipv4 = ping_at("127.0.0.1", port, certs)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)

    assert over_ipv6.endswith(b"pong")
    assert over_ipv4.endswith(b"pong")


@pytest.mark.parametrize(
    ("service_host", "expected"),
    [("10.96.0.1", "0.0.0.0"), ("fd00:10:96::1", "::"), ("", "0.0.0.0")],
)
def test_the_default_bind_address_follows_the_cluster_api_address_family(
    monkeypatch: pytest.MonkeyPatch, service_host: str, expected: str
) -> None:
    monkeypatch.delenv("APISERVER_BIND_ADDRESS", raising=False)
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", service_host)

    assert load_settings().bind_address == expected


def test_an_explicit_bind_address_wins_over_the_cluster_api_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("APISERVER_BIND_ADDRESS", "127.0.0.1")
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1")

    assert load_settings().bind_address == "127.0.0.1"

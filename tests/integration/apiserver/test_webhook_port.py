"""`APISERVER_WEBHOOK_PORT`: the real process also listens there and serves only `/crdconvert`,
`/ping` and `/readyz`, so a NetworkPolicy can open that port to the kube-apiserver and the
kubelet while the agents' port stays for agent pods."""

from __future__ import annotations

import functools
import http.client
import json
import signal
import ssl
import subprocess
from collections.abc import Iterator

import pytest

from tests.integration.apiserver.conftest import start_brupop_apiserver
from tests.support.polling import first_answer, wait_until
from tests.support.ports import free_port
from tests.support.tls import TestCertificates

REVIEW = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "ConversionReview",
    "request": {"uid": "r1", "desiredAPIVersion": "brupop.bottlerocket.aws/v1", "objects": []},
}


class Ports:
    """The agents' port and the webhook port of one running `brupop apiserver`."""

    def __init__(self, certs: TestCertificates, agents: int, webhook: int) -> None:
        self.context = ssl.create_default_context(cafile=str(certs.ca_path))
        self.agents = agents
        self.webhook = webhook

    def call(self, port: int, method: str, path: str, body: bytes | None = None) -> int:
        connection = http.client.HTTPSConnection(
            "localhost", port, context=self.context, timeout=10
        )
        try:
            connection.request(method, path, body)
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()


@pytest.fixture
def ports(certs: TestCertificates) -> Iterator[Ports]:
    webhook = free_port()
    process, agents = start_brupop_apiserver(certs, {"APISERVER_WEBHOOK_PORT": str(webhook)})
    try:
        ready = Ports(certs, agents, webhook)
        _wait_until_both_answer(ready, process)
        yield ready
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert b"Traceback" not in err


def _wait_until_both_answer(ports: Ports, process: subprocess.Popen[bytes]) -> None:
    def ping(port: int) -> int:
        assert process.poll() is None, "brupop apiserver exited"
        return ports.call(port, "GET", "/ping")

    for port in (ports.agents, ports.webhook):
        first_answer(functools.partial(ping, port), f"GET /ping on port {port}")


def test_the_webhook_port_serves_the_conversion_webhook_and_the_probes(ports: Ports) -> None:
    assert ports.call(ports.webhook, "GET", "/ping") == 200
    wait_until(
        lambda: ports.call(ports.webhook, "GET", "/readyz") == 200,
        "the readiness probe's 200 on the webhook port, once the shadow feed has listed",
        interval=0.1,
    )
    assert ports.call(ports.webhook, "POST", "/crdconvert", json.dumps(REVIEW).encode()) == 200


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/bottlerocket-node-resource"),
        ("POST", "/bottlerocket-node-resource/cordon-and-drain"),
        ("GET", "/bottlerocket-node-resource/node-uid"),
        ("GET", "/metrics"),
    ],
)
def test_the_webhook_port_serves_nothing_else(ports: Ports, method: str, path: str) -> None:
    assert ports.call(ports.webhook, method, path) == 404
    assert ports.call(ports.agents, method, path) != 404  # served on the agents' port


def test_the_agents_port_still_serves_the_webhook_and_the_probe(ports: Ports) -> None:
    assert ports.call(ports.agents, "GET", "/ping") == 200
    assert ports.call(ports.agents, "POST", "/crdconvert", json.dumps(REVIEW).encode()) == 200

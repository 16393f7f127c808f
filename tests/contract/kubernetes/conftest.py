"""Fixtures for the Kubernetes adapters' wire contract: an emulator per test and the cluster."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import kmock
import pytest

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer

NAMESPACE = "brupop-bottlerocket-aws"
SHADOWS_PATH = f"/apis/brupop.bottlerocket.aws/v2/namespaces/{NAMESPACE}/bottlerocketshadows"


@dataclass(frozen=True)
class Sent:
    """One request as the emulator received it."""

    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any
    accept: str = field(default="", compare=False)


def sent(emulator: KubeEmulator) -> list[Sent]:
    """Every request the adapters sent, oldest first."""
    return [_sent(request) for request in emulator.requests]


def _sent(request: kmock.Request) -> Sent:
    headers = {key.lower(): value for key, value in request.headers.items()}
    return Sent(
        method=str(request.method.value).upper(),
        path=request.url.path,
        query=dict(request.params),
        content_type=headers.get("content-type", ""),
        body=request.data,
        accept=headers.get("accept", ""),
    )


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    """A `v1 Status` error body as the kube-apiserver sends it."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer() as running:
        yield running


@pytest.fixture
def emulator(server: EmulatorServer) -> KubeEmulator:
    return server.emulator


@pytest.fixture
def kube(server: EmulatorServer) -> Iterator[KubernetesCluster]:
    cluster = KubernetesCluster(server.api_client(), NAMESPACE, component="brupop-controller")
    yield cluster
    cluster.close()

"""Fuzzed headers and bodies (hypothesis): never a 500, never a traceback in a response body."""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.memory.cluster import InMemoryCluster
from tests.integration.apiserver.conftest import (
    FAST_DRAINS,
    NS,
    Rig,
    add_agent_nodes,
    agent_pod,
    start_rig,
)
from tests.support.tls import TestCertificates

RESOURCE = "/bottlerocket-node-resource"
PATHS = [
    RESOURCE,
    f"{RESOURCE}/node-uid",
    f"{RESOURCE}/cordon-and-drain",
    f"{RESOURCE}/uncordon",
    f"{RESOURCE}/exclude-from-lb",
    f"{RESOURCE}/remove-exclusion-from-lb",
    "/crdconvert",
    "/ping",
    "/metrics",
    "/nowhere",
]
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# Header bytes http.client will send (no CR, LF or NUL; it refuses those itself).
header_bytes = st.binary(max_size=300).filter(lambda b: not set(b) & {0, 10, 13})
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=12,
)
status_like = st.fixed_dictionaries(
    {},
    optional={
        "current_version": json_values | st.sampled_from(["1.2.3", "01.2.3", "1.2.3-rc.1"]),
        "target_version": json_values | st.just("1.2.3"),
        "current_state": json_values | st.sampled_from(["Idle", "ErrorReset", "idle"]),
        "crash_count": json_values | st.integers(min_value=-(2**70), max_value=2**70),
        "state_transition_failure_timestamp": json_values
        | st.sampled_from(["2024-01-01T00:00:00Z", "2024-13-45T99:99:99+99:99", ""]),
    },
)
bodies = (
    st.binary(max_size=600)
    | json_values.map(lambda v: json.dumps(v).encode())
    | status_like.map(lambda v: json.dumps(v).encode())
    | st.just(b"[" * 5000)
)


@pytest.fixture(scope="module")
def rig(certs: TestCertificates) -> Iterator[Rig]:
    cluster = InMemoryCluster(NS)
    add_agent_nodes(cluster)
    cluster.shadows.create("n1", "uid-n1")
    options = ApiserverOptions(namespace=NS, drain=FAST_DRAINS, feed_watch_seconds=0.5)
    rig = start_rig(certs, cluster, options)
    yield rig
    rig.stop()


@pytest.fixture(scope="module")
def token(rig: Rig) -> str:
    return rig.cluster.issue_token(NS, agent_pod("n1"))


def send(
    rig: Rig, method: str, path: str, headers: dict[str, Any], body: bytes
) -> tuple[int, bytes]:
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    connection = http.client.HTTPSConnection(
        "127.0.0.1", rig.server.port, context=context, timeout=10
    )
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def assert_answered_cleanly(status: int, body: bytes) -> None:
    assert status < 500 or status in (502, 503), (status, body[:200])
    assert b"Traceback" not in body
    assert b'File "' not in body


@FUZZ
@given(body=bodies)
def test_fuzzed_status_bodies_from_the_real_agent_are_refused_cleanly(
    rig: Rig, token: str, body: bytes
) -> None:
    headers = {"BrupopNodeName": "n1", "BrupopNodeUid": "uid-n1", "BrupopK8sAuthToken": token}

    status, answer = send(rig, "PUT", RESOURCE, headers, body)

    assert_answered_cleanly(status, answer)
    assert status in (200, 400, 413, 422)  # 422: a running version never offered


@FUZZ
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]),
    path=st.sampled_from(PATHS),
    name=header_bytes | st.just(b"n1"),
    uid=header_bytes | st.just(b"uid-n1"),
    fuzzed_token=header_bytes,
    valid_token=st.booleans(),
    body=bodies,
)
def test_fuzzed_headers_and_bodies_on_every_route_never_fail_the_server(
    rig: Rig,
    token: str,
    method: str,
    path: str,
    name: bytes,
    uid: bytes,
    fuzzed_token: bytes,
    valid_token: bool,
    body: bytes,
) -> None:
    headers: dict[str, Any] = {"BrupopNodeName": name, "BrupopNodeUid": uid}
    headers["BrupopK8sAuthToken"] = token.encode() if valid_token else fuzzed_token

    status, answer = send(rig, method, path, headers, body)

    assert_answered_cleanly(status, answer)

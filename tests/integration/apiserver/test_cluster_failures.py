"""When Kubernetes fails, the caller hears 503 with a short body, never a 500 or a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import urllib3
from structlog.testing import capture_logs

from brupop.domain.cluster.objects import Node
from tests.integration.apiserver.conftest import NS, Rig, agent_pod

RESOURCE = "/bottlerocket-node-resource"


@pytest.fixture
def http(rig: Rig) -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(ca_certs=str(rig.certs.ca_path), retries=False, timeout=10)
    yield pool
    pool.clear()


def call(
    rig: Rig, http: urllib3.PoolManager, token: str, method: str, path: str
) -> urllib3.BaseHTTPResponse:
    headers = {"BrupopNodeName": "n1", "BrupopNodeUid": "uid-n1", "BrupopK8sAuthToken": token}
    return http.request(method, rig.server.base_url + path, headers=headers)


def assert_short_unavailable(response: urllib3.BaseHTTPResponse) -> None:
    assert response.status == 503
    body = json.loads(response.data)
    assert set(body) == {"error"} and len(body["error"]) < 200
    assert response.headers.get("Retry-After")


def test_a_failing_token_review_is_a_503(rig: Rig, http: urllib3.PoolManager) -> None:
    token = rig.cluster.issue_token(NS, agent_pod("n1"))
    rig.cluster.token_reviewer.unavailable = True

    assert_short_unavailable(call(rig, http, token, "GET", RESOURCE))


def test_a_drain_whose_pod_listing_fails_is_a_503(rig: Rig, http: urllib3.PoolManager) -> None:
    token = rig.cluster.issue_token(NS, agent_pod("n1"))
    assert call(rig, http, token, "GET", RESOURCE).status == 404  # authorized, and cached
    rig.cluster.pods.unavailable = True

    assert_short_unavailable(call(rig, http, token, "POST", f"{RESOURCE}/cordon-and-drain"))
    assert rig.drains.in_progress() == 0


def test_a_bug_in_a_handler_is_a_500_with_a_short_body_logged_once_with_its_traceback(
    rig: Rig, http: urllib3.PoolManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = rig.cluster.issue_token(NS, agent_pod("n1"))
    assert call(rig, http, token, "GET", RESOURCE).status == 404  # authorized, and cached

    def bug(name: str) -> Node:
        raise RuntimeError(f"made-up bug reading {name}")

    monkeypatch.setattr(rig.cluster.nodes, "get", bug)
    with capture_logs() as logs:
        response = call(rig, http, token, "POST", f"{RESOURCE}/uncordon")

    assert response.status == 500
    assert json.loads(response.data) == {"error": "internal error"}
    assert b"Traceback" not in response.data and b"made-up bug" not in response.data
    (error,) = [line for line in logs if line["log_level"] == "error"]
    assert error["event"] == "request.failed"
    assert isinstance(error["exc_info"], RuntimeError)  # rendered as its traceback
    assert call(rig, http, token, "GET", RESOURCE).status == 404  # the server goes on

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from brupop.cli.doctor.main import run_checks
from brupop.cli.doctor.metrics import check_metrics_at, check_metrics_by_proxy
from brupop.cli.doctor.presence import check_network_policies, check_policy
from brupop.cli.doctor.result import DoctorFinding, failed, passed
from tests.unit.cli.doctor.fake_cluster import FakeCluster, listing

NS = "brupop"
POLICY = f"/apis/brupop.bottlerocket.aws/v1/namespaces/{NS}/bottlerocketupdatepolicies/default"
NETPOL = f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies"
PROXY = f"/api/v1/namespaces/{NS}/services/http:brupop-controller-server:80/proxy/metrics"


def _named(*names: str) -> dict[str, object]:
    return listing(*({"metadata": {"name": name}} for name in names))


def test_network_policies_pass_when_both_exist_and_name_the_missing_one() -> None:
    assert check_network_policies(
        FakeCluster({NETPOL: _named("brupop-apiserver", "brupop-controller")}), NS
    ).ok
    found = check_network_policies(FakeCluster({NETPOL: _named("brupop-apiserver")}), NS)
    assert (found.ok, found.detail) == (False, "missing brupop-controller")


def test_no_policy_object_passes_with_a_note() -> None:
    found = check_policy(FakeCluster(), NS)
    assert found.ok
    assert "defaults apply" in found.detail


def test_a_policy_the_controller_cannot_use_fails_naming_the_field() -> None:
    obj = {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": "default"},
        "spec": {"canary": {"count": "many"}},
    }
    found = check_policy(FakeCluster({POLICY: obj}), NS)
    assert not found.ok
    assert "canary" in found.detail
    obj["spec"] = {"paused": False}
    assert check_policy(FakeCluster({POLICY: obj}), NS).ok


class _Exposition(http.server.BaseHTTPRequestHandler):
    body = b'brupop_hosts_state{state="Idle"} 2\n'

    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/metrics" else 404)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def controller_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Exposition)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_metrics_at_the_controller_url_pass_when_brupops_metrics_are_there(
    controller_url: str,
) -> None:
    found = check_metrics_at(controller_url, 5.0)
    assert (found.ok, found.detail) == (True, f"scraped {controller_url}/metrics")


def test_metrics_at_a_dead_url_fail_with_one_readable_reason() -> None:
    with socket.socket() as probe:  # a port just freed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        unused_port = probe.getsockname()[1]
    found = check_metrics_at(f"http://127.0.0.1:{unused_port}", 2.0)
    assert not found.ok
    assert found.detail == f"cannot read http://127.0.0.1:{unused_port}/metrics: connection refused"


def test_metrics_through_a_refusing_proxy_fail_advising_a_port_forward() -> None:
    found = check_metrics_by_proxy(FakeCluster({PROXY: 503}), NS)
    assert not found.ok
    assert "--controller-url" in found.advice
    assert check_metrics_by_proxy(FakeCluster({PROXY: "brupop_hosts_state 1\n"}), NS).ok


def test_a_result_line_takes_out_terminal_controls_from_cluster_text() -> None:
    line = failed("agents", "no Ready agent on \x1b]0;owned\x07node-a", "look").line()
    assert line == "FAIL agents: no Ready agent on node-a - do: look"
    assert passed("rbac", "fine").line() == "PASS rbac: fine"


def test_an_unreachable_api_ends_the_checks_after_the_first() -> None:
    def metrics() -> DoctorFinding:
        raise AssertionError("not reached")

    results = list(
        run_checks(FakeCluster({"/version": 503}), NS, metrics, lambda: datetime.now(UTC))
    )
    assert [(r.name, r.ok) for r in results] == [("kubernetes api", False)]

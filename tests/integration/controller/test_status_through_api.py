"""`brupop status` with a kubeconfig and no port-forward: it reads the controller's /status
through the Kubernetes API's service proxy (over real HTTP, against the API emulator), and when
it cannot, it prints one line that says what to do and exits 1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from brupop.cli.status.main import main
from tests.support.controller_surface import serve_controller
from tests.support.kube_api_rules import status_body
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_proxy import ServiceProxy
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.kubeconfig import use_kubeconfig
from tests.support.ports import free_port
from tests.unit.services.controller.fleet import Fleet

NS = "brupop-bottlerocket-aws"
SERVICE = "brupop-controller-server"


@pytest.fixture
def controller_url() -> Iterator[str]:
    """A controller's HTTP surface on loopback, after one pass over a two-node fleet."""
    with serve_controller(Fleet(2)) as (url, _):
        yield url


@pytest.fixture
def emulated() -> Iterator[tuple[EmulatorServer, ServiceProxy]]:
    emulator = KubeEmulator()
    proxy = ServiceProxy(emulator)
    with EmulatorServer(emulator) as server:
        yield server, proxy


@pytest.fixture
def kubeconfig(
    emulated: tuple[EmulatorServer, ServiceProxy], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A kubeconfig for the emulator in $KUBECONFIG; not in a pod."""
    server, _ = emulated
    return use_kubeconfig(monkeypatch, tmp_path / "kubeconfig", server.url)


def test_with_a_kubeconfig_the_status_comes_through_the_api_service_proxy(
    emulated: tuple[EmulatorServer, ServiceProxy],
    kubeconfig: Path,
    controller_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, proxy = emulated
    proxy.add_service(NS, SERVICE, port_name="main", port=80, backend=controller_url)
    assert main(["-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert sorted(row["node"] for row in document["nodes"]) == ["node-00", "node-01"]
    paths = [request.url.path for request in server.emulator.requests]
    assert f"/api/v1/namespaces/{NS}/services/http:{SERVICE}:80/proxy/status" in paths


def test_the_namespace_option_chooses_where_the_service_is_looked_for(
    emulated: tuple[EmulatorServer, ServiceProxy],
    kubeconfig: Path,
    controller_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, proxy = emulated
    proxy.add_service("ops", SERVICE, port_name="main", port=80, backend=controller_url)
    assert main(["--namespace", "ops"]) == 0
    assert capsys.readouterr().out.startswith("NODE")


def test_a_missing_controller_service_says_to_check_the_namespace(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"no Service {NS}/{SERVICE}" in err and "--namespace" in err


def test_a_controller_that_does_not_answer_says_to_check_its_pods(
    emulated: tuple[EmulatorServer, ServiceProxy],
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, proxy = emulated
    dead = f"http://127.0.0.1:{free_port()}"
    proxy.add_service(NS, SERVICE, port_name="main", port=80, backend=dead)
    assert main(["--timeout", "5"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "is a controller pod ready?" in err and f"kubectl -n {NS} get pods" in err


def test_a_user_without_proxy_rights_is_told_which_permission_is_missing(
    emulated: tuple[EmulatorServer, ServiceProxy],
    kubeconfig: Path,
    controller_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, proxy = emulated
    proxy.add_service(NS, SERVICE, port_name="main", port=80, backend=controller_url)
    refusal = status_body(403, "Forbidden", 'services "brupop-controller-server" is forbidden')
    server.emulator[ServiceProxy.is_proxy_request] << 403 << refusal
    assert main([]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"needs `get` on `services/proxy` in {NS}" in err


def test_an_unreachable_kubernetes_api_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    use_kubeconfig(monkeypatch, tmp_path / "kubeconfig", url, token="t")
    assert main(["--timeout", "5"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"the Kubernetes API at {url} does not answer" in err
    assert "kubeconfig's context" in err, "the API is down, not the controller"


def test_without_any_configuration_it_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setattr("brupop.cli.status.main.LOCAL_URL", f"http://127.0.0.1:{free_port()}")
    assert main(["--timeout", "5"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "no Kubernetes configuration" in err
    assert f"kubectl -n {NS} port-forward svc/{SERVICE} 8080:80" in err


def test_a_namespace_that_cannot_exist_is_a_usage_error_naming_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--namespace", "bad ns!"])
    assert stopped.value.code == 2
    assert "argument --namespace:" in capsys.readouterr().err

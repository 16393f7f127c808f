"""PROBE_ALLOWED_NETWORKS: read and checked at start (a bad one stops the controller with one
line naming it, exit 2), and wired into the controller's probes and alert gate: by default
they refuse loopback and the cluster's API server; what the setting lists they may reach."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog

from brupop.domain.policy.update_policy import HealthGateSpec, HttpProbeSpec
from brupop.domain.safety.health_gate import CheckOutcome, CheckResult
from brupop.entrypoints.controller.container import ControllerContainer
from brupop.entrypoints.controller.main import main
from brupop.entrypoints.controller.settings import load_settings
from tests.support.probe_server import ProbeServer


@pytest.fixture(autouse=True)
def controller_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for variable in ("PROBE_ALLOWED_NETWORKS", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("MY_NODE_NAME", "node-a")
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("10.0.0.0/33", "'10.0.0.0/33' is not a CIDR, an address or a host name"),
        ("http://prom:9090", "is not a CIDR"),
        (",".join(["10.0.0.1"] * 65), "more than 64 entries"),
        ("x" * 5000, "at most 4096 characters"),
    ],
)
def test_a_bad_allowance_stops_the_controller_at_start_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str, said: str
) -> None:
    monkeypatch.setenv("PROBE_ALLOWED_NETWORKS", value)

    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("brupop controller: PROBE_ALLOWED_NETWORKS: ")
    assert said in err and err.count("\n") == 1 and "Traceback" not in err


def _probe(monkeypatch: pytest.MonkeyPatch, allowance: str | None) -> CheckResult:
    """The controller's probe of a loopback server, as its container wires it."""
    if allowance is not None:
        monkeypatch.setenv("PROBE_ALLOWED_NETWORKS", allowance)
    settings, config = load_settings()
    container = ControllerContainer(config=config, address_allowance=settings.address_allowance)
    container.settings.from_dict(settings.model_dump())
    container.cluster().add_node("n1", internal_ip="127.0.0.1")
    with ProbeServer() as server:
        server.answers["/healthz"] = (200, b"")
        port = server.base_url.rsplit(":", 1)[1]
        probe = HttpProbeSpec(url=f"http://{{node_ip}}:{port}/healthz")
        gate = HealthGateSpec(require_node_ready=False, http_probes=(probe,))
        return container.health_checks().run("n1", gate)[-1]


def test_the_controller_refuses_a_loopback_probe_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = _probe(monkeypatch, None)

    assert result.outcome is CheckOutcome.PENDING
    assert result.detail.endswith(
        "failed: refused: 127.0.0.1 is a loopback address (not allowed by "
        "PROBE_ALLOWED_NETWORKS) (expected 200)"
    )


def test_the_controller_probes_what_the_allowance_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _probe(monkeypatch, "127.0.0.1").outcome is CheckOutcome.PASSED


def test_the_api_servers_service_address_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    settings, _ = load_settings()

    assert settings.address_allowance.address_refusal("api", "10.96.0.1") is not None
    assert settings.address_allowance.name_refusal("10.96.0.1") is not None

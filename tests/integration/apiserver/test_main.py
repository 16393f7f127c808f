"""`brupop apiserver` as a process: bad settings stop it with one line; it serves HTTPS and ends
cleanly on SIGTERM."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from brupop.entrypoints.apiserver.main import main
from tests.integration.apiserver.conftest import start_brupop_apiserver
from tests.integration.apiserver.raw_client import ping_soon
from tests.support.tls import TestCertificates


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """main() configures structlog for the process; give later tests theirs back."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("APISERVER_INTERNAL_PORT", "70000"),
        ("DRAIN_TIMEOUT_SECONDS", "soon"),
        ("DRAIN_TIMEOUT_SECONDS", "1e12"),
        ("POD_DELETION_TIMEOUT_SECONDS", "inf"),
        ("TOKEN_REVIEW_CACHE_SECONDS", "-1"),
        ("TOKEN_REFUSAL_CACHE_SECONDS", "3600"),
        ("TOKEN_REVIEW_THREADS", "0"),
        ("APISERVER_WEBHOOK_PORT", "0"),
        ("APISERVER_WEBHOOK_PORT", "8443"),
        ("BRUPOP_CLUSTER", "minikube"),
        ("EVICTION_RETRY_INTERVAL_SECONDS", "0"),
        ("APISERVER_MAX_CONNECTIONS", "0"),
        ("APISERVER_MAX_CONNECTIONS", "1e9"),
        ("APISERVER_WEBHOOK_MAX_CONNECTIONS", "0"),
        ("APISERVER_MAX_CONNECTIONS_PER_ADDRESS", "many"),
        ("APISERVER_MAX_CONNECTIONS_PER_ADDRESS", "0"),
        ("APISERVER_PROBE_RESERVE_CONNECTIONS", "-1"),
        ("APISERVER_TLS_HANDSHAKE_TIMEOUT_SECONDS", "inf"),
        ("APISERVER_HEADER_TIMEOUT_SECONDS", "nan"),
        ("APISERVER_HEADER_TIMEOUT_SECONDS", "0"),
    ],
)
def test_a_bad_setting_stops_the_apiserver_with_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, value: str
) -> None:
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv(variable, value)

    assert main([]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"brupop apiserver: {variable}: "), err
    assert "Traceback" not in err


def test_the_port_is_required_for_a_real_cluster(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("APISERVER_INTERNAL_PORT", raising=False)
    monkeypatch.setenv("BRUPOP_CLUSTER", "kubernetes")

    assert main([]) == 2
    assert "APISERVER_INTERNAL_PORT" in capsys.readouterr().err


def test_missing_certificate_files_stop_the_apiserver_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv("APISERVER_TLS_CERT_PATH", str(tmp_path / "missing.crt"))
    monkeypatch.setenv("APISERVER_TLS_KEY_PATH", str(tmp_path / "missing.key"))
    monkeypatch.setenv("TERMINATION_LOG", str(tmp_path / "termination-log"))

    assert main([]) == 1

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "cannot start" in (tmp_path / "termination-log").read_text()


def test_no_kubernetes_configuration_stops_the_apiserver_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    certs: TestCertificates,
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("BRUPOP_CLUSTER", "kubernetes")
    monkeypatch.setenv("APISERVER_INTERNAL_PORT", "8443")
    monkeypatch.setenv("APISERVER_TLS_CERT_PATH", str(certs.cert_path))
    monkeypatch.setenv("APISERVER_TLS_KEY_PATH", str(certs.key_path))
    monkeypatch.setenv("TERMINATION_LOG", str(tmp_path / "termination-log"))

    assert main([]) == 1

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no Kubernetes configuration" in err


# "2": as the chart runs it, without docstrings and asserts.
@pytest.mark.parametrize("optimization", ["0", "2"])
def test_brupop_apiserver_serves_https_on_the_memory_cluster_and_exits_zero_on_sigterm(
    certs: TestCertificates, optimization: str
) -> None:
    process, port = start_brupop_apiserver(certs, PYTHONOPTIMIZE=optimization)
    try:
        assert ping_soon(port, certs.ca_path) == b"pong"
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)

    assert process.returncode == 0, err
    assert b"Traceback" not in err

"""`brupop status` through the Kubernetes API, with a `default` update policy: the policy's phase
and message are the first line, above the node table (over real HTTP, against the emulator)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brupop.cli.status.main import main
from tests.support.controller_surface import serve_controller
from tests.support.kube_api_rules import POLICIES, status_body
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_proxy import ServiceProxy
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.kubeconfig import use_kubeconfig
from tests.unit.services.controller.fleet import Fleet

NS = "brupop-bottlerocket-aws"
POLICY_PATH = f"/apis/brupop.bottlerocket.aws/v1/namespaces/{NS}/bottlerocketupdatepolicies"
HALTED = {
    "phase": "Halted",
    "message": "Halted: node-b failed its health gate (nodeReady).",
    "haltedAt": "2026-11-30T09:00:00Z",
    "haltReason": {"node": "node-b", "check": "nodeReady"},
    "failures": 1,
}


@pytest.fixture
def emulator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeEmulator]:
    """The emulator proxying to a controller that has made one pass over two nodes, and a
    kubeconfig for it in $KUBECONFIG."""
    with serve_controller(Fleet(2)) as (backend, _):
        emulator = KubeEmulator()
        proxy = ServiceProxy(emulator)
        proxy.add_service(
            NS, "brupop-controller-server", port_name="main", port=80, backend=backend
        )
        with EmulatorServer(emulator) as server:
            use_kubeconfig(monkeypatch, tmp_path / "kc", server.url)
            yield emulator


def _apply(emulator: KubeEmulator, spec: dict[str, Any], status: dict[str, Any] | None) -> None:
    obj: dict[str, Any] = {
        "metadata": {"name": "default", "namespace": NS},
        "spec": spec,
        **({"status": status} if status else {}),
    }
    emulator.put_object(POLICIES, obj)


def test_a_policy_s_phase_and_message_are_the_first_line(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {}, HALTED)

    assert main([]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Policy default: Halted - Halted: node-b failed its health gate (nodeReady)."
    assert re.split(r"\s{2,}", lines[1])[:2] == ["NODE", "STATE"]
    assert len(lines) == 4


def test_a_policy_the_controller_has_not_described_yet_shows_its_pause(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {"paused": True}, None)

    assert main([]) == 0

    first = capsys.readouterr().out.splitlines()[0]
    assert first == "Policy default: Paused - the controller has not written a status yet"


def test_json_output_carries_the_policy(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {"paused": False}, HALTED)

    assert main(["-o", "json"]) == 0

    document = json.loads(capsys.readouterr().out)
    assert document["policy"] == {
        "name": "default",
        "phase": "Halted",
        "message": HALTED["message"],
        "paused": False,
    }


def test_without_a_policy_the_table_comes_first_as_before(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out.startswith("NODE")


def test_a_policy_the_user_may_not_read_is_a_warning_and_the_table_still_shows(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {}, HALTED)
    refusal = status_body(403, "Forbidden", "bottlerocketupdatepolicies is forbidden")
    emulator[f"get {POLICY_PATH}/default"] << 403 << refusal

    assert main([]) == 0

    captured = capsys.readouterr()
    assert captured.out.startswith("NODE")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert "needs `get` on `bottlerocketupdatepolicies`" in captured.err

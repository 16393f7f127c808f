"""`brupop pause` and `brupop resume` against a policy whose spec the controller cannot use (a
window in the tzdata folder `US`): the tool meant for recovery still writes what was asked,
then says in one line on stderr, with exit 1, that the controller keeps its last good policy
until the spec is fixed. Never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from brupop.cli.pausing import pause, resume
from tests.support.kube_api_rules import POLICIES
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.kubeconfig import write_kubeconfig

NS = "brupop-bottlerocket-aws"


@pytest.fixture
def emulator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeEmulator]:
    """The API emulator on loopback, and a kubeconfig for it in $KUBECONFIG (not in a pod)."""
    with EmulatorServer() as server:
        monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kc", server.url)))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        yield server.emulator


def _apply_spec(emulator: KubeEmulator, spec: dict[str, Any]) -> None:
    emulator.put_object(
        POLICIES,
        {
            "apiVersion": "brupop.bottlerocket.aws/v1",
            "kind": "BottlerocketUpdatePolicy",
            "metadata": {"name": "default", "namespace": NS},
            "spec": spec,
        },
    )


@pytest.mark.parametrize(("command", "paused"), [(pause, True), (resume, False)])
@pytest.mark.parametrize("zone", ["US", "Europe"])
def test_a_spec_the_controller_cannot_use_is_written_and_named_in_one_line_with_exit_1(
    emulator: KubeEmulator,
    capsys: pytest.CaptureFixture[str],
    command: ModuleType,
    paused: bool,
    zone: str,
) -> None:
    window = {"cron": "* * 2-4 * * * *", "timeZone": zone}
    _apply_spec(emulator, {"paused": not paused, "windows": [window]})

    assert command.main([]) == 1

    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    verb = command.__name__.rsplit(".", 1)[-1]
    assert captured.err.startswith(f"brupop {verb}: spec.paused={str(paused).lower()} written")
    assert f"spec.windows.0.timeZone: {zone!r} is a group of time zones" in captured.err
    assert "keeps its last good policy" in captured.err
    stored = emulator.stored(POLICIES, NS, "default")
    assert stored is not None and stored["spec"]["paused"] is paused

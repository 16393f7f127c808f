"""`brupop plan` against a cluster where brupop is not (yet) installed, or the wrong namespace:
one line saying so, exit 1, instead of a 404 of a listing or every node `no status`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from brupop.cli.plan.main import main
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from tests.support.kube_api_rules import KINDS, SHADOWS
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.kubeconfig import write_kubeconfig

SHADOW_ROUTE = next(route for route, kind in KINDS.items() if kind is SHADOWS)


@pytest.fixture
def kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A kubeconfig for an emulated cluster with two opted-in nodes and no shadow."""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    emulator = KubeEmulator()
    for name in ("node-a", "node-b"):
        emulator.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE})
    with EmulatorServer(emulator) as server:
        yield write_kubeconfig(tmp_path / "kubeconfig", server.url)


def test_a_cluster_without_the_shadow_crd_is_one_line_saying_brupop_is_not_installed(
    kubeconfig: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delitem(KINDS, SHADOW_ROUTE)  # the API serves no BottlerocketShadow

    assert main(["--kubeconfig", str(kubeconfig)]) == 1

    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "brupop plan: the cluster has no BottlerocketShadow resource (its CRD is not "
        "installed): install brupop, or check the kubeconfig's context (brupop doctor "
        "--namespace brupop-bottlerocket-aws)"
    ]


def test_a_namespace_without_shadows_is_one_line_naming_it(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--kubeconfig", str(kubeconfig), "--namespace", "nope"]) == 1

    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "brupop plan: no BottlerocketShadow in namespace 'nope' (2 nodes opted in)"
    )

"""`brupop policy lint` against a cluster (the API emulator over real HTTP): each rule of the
policy that does nothing on the opted-in nodes is one line naming its field (exit 1); a policy
whose rules all act, or no policy at all, says so (exit 0)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from brupop.cli.policy.main import main
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.kubeconfig import write_kubeconfig
from tests.support.policy_file import write_policy_file


@pytest.fixture
def kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A kubeconfig for an emulated cluster with two opted-in nodes in zones a and b."""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    emulator = KubeEmulator()
    for name, zone in (("node-a", "a"), ("node-b", "b")):
        emulator.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE, "zone": zone})
    emulator.add_node("other", labels={"brupop.bottlerocket.aws/canary": "true"})  # not opted in
    with EmulatorServer(emulator) as server:
        yield write_kubeconfig(tmp_path / "kubeconfig", server.url)


def test_a_canary_selector_no_opted_in_node_matches_is_one_line_and_exit_1(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = '  canary:\n    selector: "brupop.bottlerocket.aws/canary=true"\n    soakSeconds: 1800\n'
    policy = write_policy_file(tmp_path, spec)

    assert main(["lint", "--kubeconfig", str(kubeconfig), "--policy", policy]) == 1

    assert capsys.readouterr().out.splitlines() == [
        "spec.canary.selector: 'brupop.bottlerocket.aws/canary=true' picks none of the 2 "
        "opted-in nodes: there are no canaries"
    ]


def test_a_policy_whose_rules_all_act_says_so_and_exits_0(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = "  canary:\n    selector: zone=a\n  budgets:\n  - groupBy: zone\n    maxConcurrent: 1\n"
    policy = write_policy_file(tmp_path, spec)

    assert main(["lint", "--kubeconfig", str(kubeconfig), "--policy", policy]) == 0

    assert capsys.readouterr().out == "every rule acts on the 2 opted-in nodes\n"


def test_no_policy_in_the_cluster_has_nothing_to_lint(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lint", "--kubeconfig", str(kubeconfig), "--namespace", "brupop"]) == 0

    assert capsys.readouterr().out == "no policy object `default` in brupop: no rule to lint\n"


def test_a_bad_policy_file_is_one_line_and_exit_2(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write_policy_file(tmp_path, "  canary:\n    count: many\n")

    assert main(["lint", "--kubeconfig", str(kubeconfig), "--policy", policy]) == 2

    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("brupop policy lint: --policy: "), lines

"""`brupop simulate --kubeconfig` / `--manifest`: the in-memory cluster by default, a readable
kubeconfig and rendered chart otherwise, and one line with exit code 2 for a bad one."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.simulation.flags.cluster_flags import bundled_manifest
from brupop.simulation.flags.options import OptionError, parse_options
from brupop.simulation.main import main
from tests.support.kubeconfig import write_kubeconfig


def test_without_kubeconfig_the_simulation_runs_in_memory() -> None:
    assert parse_options([]).cluster.kubeconfig is None


def test_a_kubeconfig_defaults_the_manifest_to_the_source_trees_rendered_chart(
    tmp_path: Path,
) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:6443")

    cluster = parse_options(["--kubeconfig", str(kubeconfig)]).cluster

    assert cluster.kubeconfig == kubeconfig
    assert cluster.manifest == bundled_manifest()
    assert cluster.manifest is not None and cluster.manifest.name.endswith("operator.yaml")


def test_a_manifest_without_a_kubeconfig_is_refused() -> None:
    with pytest.raises(OptionError, match="--manifest: only with --kubeconfig"):
        parse_options(["--manifest", "chart.yaml"])


def test_an_unreadable_manifest_is_one_line_naming_its_flag_with_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:6443")

    code = main(["--kubeconfig", str(kubeconfig), "--manifest", str(tmp_path / "missing.yaml")])

    assert code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("brupop simulate: --manifest: cannot read"), (
        lines
    )


def test_a_missing_kubeconfig_is_the_line_every_command_prints_with_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.yaml"

    assert main(["--kubeconfig", str(missing)]) == 2

    assert capsys.readouterr().err.splitlines() == [
        f"brupop simulate: the kubeconfig {missing} cannot be used: there is no such file"
    ]


def test_a_context_without_a_kubeconfig_is_refused() -> None:
    with pytest.raises(OptionError, match="--context: only with --kubeconfig"):
        parse_options(["--context", "prod"])

"""`brupop simulate --kubeconfig` / `--manifest`: the in-memory cluster by default, a readable
kubeconfig and rendered chart otherwise, and one line with exit code 2 for a bad one."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.entrypoints.simulate.flags.cluster_flags import bundled_manifest
from brupop.entrypoints.simulate.flags.options import OptionError, parse_options
from brupop.entrypoints.simulate.main import main


def test_without_kubeconfig_the_simulation_runs_in_memory() -> None:
    assert parse_options([]).cluster.kubeconfig is None


def test_a_kubeconfig_defaults_the_manifest_to_the_source_trees_rendered_chart(
    tmp_path: Path,
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")

    cluster = parse_options(["--kubeconfig", str(kubeconfig)]).cluster

    assert cluster.kubeconfig == kubeconfig
    assert cluster.manifest == bundled_manifest()
    assert cluster.manifest is not None and cluster.manifest.name.endswith("operator.yaml")


def test_a_manifest_without_a_kubeconfig_is_refused() -> None:
    with pytest.raises(OptionError, match="--manifest: only with --kubeconfig"):
        parse_options(["--manifest", "chart.yaml"])


@pytest.mark.parametrize("flag", ["--kubeconfig", "--manifest"])
def test_an_unreadable_file_is_one_line_naming_its_flag_with_exit_two(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    others = [] if flag == "--kubeconfig" else ["--kubeconfig", str(kubeconfig)]

    code = main([*others, flag, str(tmp_path / "missing.yaml")])

    assert code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"brupop simulate: {flag}: cannot read"), lines

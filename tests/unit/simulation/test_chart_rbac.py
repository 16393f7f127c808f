"""`brupop simulate --kubeconfig K --manifest FILE`: simulate installs the rendered chart's
namespace and RBAC, marked as its own; a manifest it cannot use is one line naming the file
and why, never a traceback or a hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.cli.fleet_description.simulated_cluster import ClusterRefused
from brupop.simulation.flags.cluster_flags import bundled_manifest
from brupop.simulation.fleet.real_cluster.chart_objects import RBAC_KINDS, chart_rbac
from brupop.simulation.fleet.real_cluster.ownership import SIMULATED

NAMESPACE = "brupop-bottlerocket-aws"
ROLE = f"apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: agent, namespace: {NAMESPACE}}}\n"
HOME = f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {NAMESPACE}\n"


def _bomb() -> str:
    keys = ["x0: &x0 1"] + [f"x{n}: &x{n} [{', '.join([f'*x{n - 1}'] * 9)}]" for n in range(1, 9)]
    return HOME + "---\n" + ROLE + "\n".join(keys) + "\n"


def test_the_rendered_chart_gives_its_namespace_and_rbac_marked_as_simulates() -> None:
    manifest = bundled_manifest()
    assert manifest is not None
    objects = chart_rbac(manifest, NAMESPACE)
    assert {obj["kind"] for obj in objects} == RBAC_KINDS
    assert all(obj["metadata"]["labels"][SIMULATED] == "true" for obj in objects)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (HOME + "rules: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 64 levels"),
        (_bomb(), "values once its aliases are expanded"),
        ("apiVersion: v1\nkind: Namespace\n", "a Namespace without an apiVersion, a metadata.name"),
        (ROLE.replace("metadata: {", "metadata: {labels: [a], "), "labels as a mapping"),
        (HOME.replace("  name:", "  name: x\n  name:"), "the key 'name' appears twice"),
        (ROLE, "its Namespace is missing"),
        ("kind: [unclosed\n", "not valid YAML (line 2)"),
    ],
    ids=[
        "nested-5000-deep",
        "alias-bomb",
        "no-metadata",
        "labels-a-list",
        "a-key-twice",
        "no-namespace",
        "not-yaml",
    ],
)
def test_a_manifest_simulate_cannot_use_is_refused_in_one_line(
    tmp_path: Path, text: str, reason: str
) -> None:
    manifest = tmp_path / "chart.yaml"
    manifest.write_text(text, encoding="utf-8")
    with pytest.raises(ClusterRefused, match=f"^--manifest: {manifest}: ") as refused:
        chart_rbac(manifest, NAMESPACE)
    assert reason in str(refused.value) and "\n" not in str(refused.value)


def test_a_manifest_past_its_size_or_not_utf8_is_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    huge.write_bytes(HOME.encode() + b"#" * (4 * 1024 * 1024))
    with pytest.raises(ClusterRefused, match="larger than 4194304 bytes"):
        chart_rbac(huge, NAMESPACE)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"kind: Namespace\nname: \xc3\x28\n")
    with pytest.raises(ClusterRefused, match="not valid YAML"):
        chart_rbac(binary, NAMESPACE)
